import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const here = join(import.meta.dirname, "..");
const built = existsSync(join(here, "..", "..", "packages", "kernel", "dist", "index.js"));

// The demo runs against the built packages, exactly as `npm run demo` does; `npm test` builds first.
describe.skipIf(!built)("the offline demo (skipped when the packages are not built: run `pnpm run build`)", () => {
  it("replays its cassette against today's code, runs code in the sandbox, and presents the report", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["demo.mjs"], {
      cwd: here,
      env: { PATH: process.env.PATH ?? "" },
      timeout: 60_000,
    });
    // The cassette matches requests by content, so replaying it at all proves that the research-analyst agent's
    // soul and the /report-writing skill's body reached the model, as when it was recorded.
    expect(stdout).toContain('agent "research-analyst": Turns research notes');
    expect(stdout).toContain("> /report-writing Write a short report");
    expect(stdout).toContain("✓ bash(");
    expect(stdout).toContain('✓ everything_get-sum({"a":7,"b":3})');
    expect(stdout).toContain('✓ web_fetch({"url":"http://127.0.0.1:47115/guide"})');
    expect(stdout).toMatch(/Presented files:\n {2}\/mnt\/user-data\/outputs\/agent-harness-report\.md/);
    expect(stdout).toContain("| total | 10 |");
    expect(stdout).toMatch(/11 tool calls, 0 failed\./);
  });
});
