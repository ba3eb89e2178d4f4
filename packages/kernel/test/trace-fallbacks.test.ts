import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PACKAGES = fileURLToPath(new URL("../../", import.meta.url));

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name === "test") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (entry.name.endsWith(".ts") && path.includes(`${join("", "src")}/`)) out.push(path);
  }
  return out;
}

// A carrier falling back to the ambient id (`x ?? getCurrentTraceId()`), or the ambient id falling back to
// anything but a display placeholder (`getCurrentTraceId() ?? y`), is `resolveTraceId` written out by hand,
// without its validation or its fresh-id fallback.
const OPEN_CODED = [/\?\?\s*getCurrentTraceId\(\)/, /getCurrentTraceId\(\)\s*\?\?(?!\s*["'`])/];

describe("trace-id fallbacks", () => {
  it("go through resolveTraceId / ensureTraceContext everywhere outside the kernel's trace module", () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(PACKAGES)) {
      if (file.endsWith(join("kernel", "src", "trace.ts"))) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (OPEN_CODED.some((re) => re.test(line))) offenders.push(`${relative(PACKAGES, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
