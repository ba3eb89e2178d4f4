import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import acpPlugin, { decidePermission, resolveEnvRefs } from "../src/index.js";

const options = [
  { optionId: "a", name: "Allow", kind: "allow_once" as const },
  { optionId: "r", name: "Reject", kind: "reject_once" as const },
];

describe("decidePermission", () => {
  it("selects the reject option when auto-approval is off", () => {
    expect(decidePermission(options, false)).toEqual({ outcome: { outcome: "selected", optionId: "r" } });
  });
  it("selects the allow option when auto-approval is on", () => {
    expect(decidePermission(options, true)).toEqual({ outcome: { outcome: "selected", optionId: "a" } });
  });
  it("answers cancelled when no reject option is offered", () => {
    expect(decidePermission([options[0] as (typeof options)[number]], false)).toEqual({ outcome: { outcome: "cancelled" } });
  });
});

describe("resolveEnvRefs", () => {
  it("substitutes $VAR and ${VAR} from the given environment", () => {
    expect(resolveEnvRefs({ A: "$X", B: "pre-${X}-post" }, { X: "v" }, "acp_agents.a")).toEqual({ A: "v", B: "pre-v-post" });
  });
  it("names the unset variable and the config key", () => {
    let message = "";
    try {
      resolveEnvRefs({ KEY: "$NOPE" }, {}, "acp_agents.codex");
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("NOPE is not set");
    expect(message).toContain("acp_agents.codex.env.KEY");
  });
});

describe("plugin setup", () => {
  it("adds no invoke_acp_agent tool when no agent is configured, and adds it (with descriptions) when one is", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "antler-acp-unit-"));
    const make = async (config: unknown) =>
      AntlerClient.create({
        config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "memory" }, title: { enabled: false } },
        plugins: [scriptedModelsPlugin({ m: [] }), { plugin: acpPlugin, config }],
        cwd,
        env: {},
        discover: false,
      });
    const empty = await make({});
    const withAgent = await make({ acp_agents: { codex: { command: "codex-acp", description: "Writes Rust code." } } });
    try {
      const names = async (c: AntlerClient) => (await c.kernel.getAvailableTools()).map((t) => t.name);
      expect(await names(empty)).not.toContain("invoke_acp_agent");
      const tools = await withAgent.kernel.getAvailableTools();
      const tool = tools.find((t) => t.name === "invoke_acp_agent");
      expect(tool?.description).toContain("codex: Writes Rust code.");
    } finally {
      await empty.close();
      await withAgent.close();
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
