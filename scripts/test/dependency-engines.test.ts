import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { allowsAllOf, engineConflicts } from "../dependency-engines.mjs";
import { publishedPackages } from "../workspace-packages.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ours = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node as string;

/**
 * Dependencies that declare a newer Node than ours and are kept anyway, each for a stated reason; each package's
 * tests pass on Node 20 with them. An entry that no longer occurs fails the test too, so the list cannot go stale.
 */
const ACCEPTED = [
  // @octokit/request 10.0.16 declares Node >= 20 itself but takes content-type ^3, which declares >= 22 (plain JS).
  "content-type@3.1.1 via @antler/plugin-channel-feishu",
  "content-type@3.1.1 via @antler/plugin-channel-github",
  // Every @mendable/firecrawl-js 4.x declares Node >= 22; the provider's README says so (its tests pass on Node 20).
  "@mendable/firecrawl-js@4.42.0 via @antler/tools-firecrawl",
  "firecrawl@4.30.1 via @antler/tools-firecrawl",
];

describe("dependency engines", () => {
  it("no installed production dependency of a published package leaves out a Node our engines allow, but the accepted ones", () => {
    const found = engineConflicts(publishedPackages(root)).map((c) => `${c.dependency} via ${c.via} (engines.node ${c.engines})`);
    const unexpected = found.filter((f) => !ACCEPTED.some((a) => f.startsWith(`${a} (`)));
    const stale = ACCEPTED.filter((a) => !found.some((f) => f.startsWith(`${a} (`)));
    expect({ unexpected, stale }).toEqual({ unexpected: [], stale: [] });
  });

  it("reads ranges one Node major at a time, up to the newest one CI runs", () => {
    expect(allowsAllOf(">=22.0.0", ours)).toBe(false); // kysely 0.29
    expect(allowsAllOf(">=20.0.0", ours)).toBe(true); // kysely 0.28
    expect(allowsAllOf(">=20.19.0", ">=20.11")).toBe(false);
    expect(allowsAllOf(">=20.18.1 <21 || >=22", ours)).toBe(true);
    // A native addon lists the majors it is built for: a major above the newest tested one is not held against it.
    expect(allowsAllOf("20.x || 22.x || 23.x || 24.x", ours)).toBe(true);
    expect(allowsAllOf("20.x || 24.x", ours)).toBe(false);
  });
});
