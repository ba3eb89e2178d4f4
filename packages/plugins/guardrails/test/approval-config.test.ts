import { ErrorCodes, isAntlerError } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import runtimePlugin from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import guardrailsPlugin, { approvalSectionSchema } from "../src/index.js";

const kernels: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const k of kernels.splice(0)) await k.close();
});

async function bootError(approval: unknown): Promise<unknown> {
  return createTestKernel({
    plugins: [runtimePlugin, guardrailsPlugin],
    config: { storage: { backend: "memory" }, approval },
    start: false,
  }).then(
    (kernel) => {
      kernels.push(kernel);
      return undefined;
    },
    (err: unknown) => err,
  );
}

describe("approval: config", () => {
  it("parses durations and fills the defaults (24h, reject on timeout, reject when non-interactive)", () => {
    const section = approvalSectionSchema.parse({
      timeout: "90s",
      rules: [
        { tools: ["bash"], timeout: "2h" },
        { groups: ["web"], timeout: 5 },
      ],
    });
    expect(section.timeout).toBe(90_000);
    expect(section.rules.map((r) => r.timeout)).toEqual([7_200_000, 5000]);
    expect(approvalSectionSchema.parse({})).toMatchObject({
      timeout: 86_400_000,
      on_timeout: "reject",
      non_interactive: "reject",
      rules: [],
    });
  });

  it("refuses a rule that names no tool or group, at its path, with what to write", async () => {
    const err = await bootError({ rules: [{ name: "empty" }] });
    expect(isAntlerError(err, ErrorCodes.CONFIG_INVALID)).toBe(true);
    expect(String((err as Error).message)).toMatch(/approval\.rules\[0\]\.tools: a rule must name tools, groups or guardrail: ask/);
  });

  it("refuses a duration without a unit, a bad regular expression, an unknown decision and an unknown key", async () => {
    expect(String(await bootError({ timeout: "soon", rules: [{ tools: ["bash"] }] }))).toMatch(
      /approval\.timeout: "soon" is not a duration; write a number with a unit: 30s, 10m, 2h, 1d/,
    );
    expect(String(await bootError({ rules: [{ tools: ["bash"], when: { args: { command: { matches: "(" } } } }] }))).toMatch(
      /approval\.rules\[0\]\.when\.args\.command\.matches: not a regular expression/,
    );
    expect(String(await bootError({ rules: [{ tools: ["bash"], on_timeout: "maybe" }] }))).toMatch(/approval\.rules\[0\]\.on_timeout/);
    expect(String(await bootError({ rules: [{ tool: ["bash"] }] }))).toContain("tool");
    expect(String(await bootError({ rules: [{ tools: ["bash"], when: { args: { command: {} } } }] }))).toContain(
      "an argument condition needs one of equals, in, matches, exists",
    );
  });

  it("refuses enabled: true without rules", async () => {
    expect(String(await bootError({ enabled: true }))).toMatch(/approval\.rules: approval\.enabled is true but no rule is configured/);
  });

  it("adds the Approval middleware only when rules are configured", async () => {
    const on = await createTestKernel({
      plugins: [runtimePlugin, guardrailsPlugin],
      config: { storage: { backend: "memory" }, approval: { rules: [{ tools: ["bash"] }] } },
      start: false,
    });
    kernels.push(on);
    const off = await createTestKernel({
      plugins: [runtimePlugin, guardrailsPlugin],
      config: { storage: { backend: "memory" } },
      start: false,
    });
    kernels.push(off);
    const names = async (kernel: typeof on) => (await kernel.assembleMiddleware({})).map((e) => e.name);
    expect(await names(on)).toContain("@antler/plugin-guardrails/approval");
    expect(await names(off)).not.toContain("@antler/plugin-guardrails/approval");
  });
});
