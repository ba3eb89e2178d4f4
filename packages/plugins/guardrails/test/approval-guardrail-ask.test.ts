import { definePlugin } from "@antler/kernel";
import { useTempDirs } from "@antler/kernel/testing";
import type { AntlerClient } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import { GUARDRAILS_PLUGIN_NAME, registerGuardrailProvider } from "../src/index.js";
import { approvalClient, callThenReport, type Ledger } from "./approval-fixtures.js";

const temp = useTempDirs();
const open: AntlerClient[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close();
});

// A policy that wants a person for writes under /srv, denies writes under /etc, and allows the rest.
const prodPolicy = definePlugin({
  name: "prod-policy",
  version: "1.0.0",
  kernel: "^0.1.0",
  dependsOn: [GUARDRAILS_PLUGIN_NAME],
  setup(ctx) {
    registerGuardrailProvider(ctx, {
      use: "prod",
      create: () => ({
        name: "prod",
        evaluate(request) {
          const path = String(request.tool_input.path ?? "");
          if (request.tool_name !== "write_file") return { allow: true, reasons: [] };
          if (path.startsWith("/srv/"))
            return {
              allow: false,
              ask: true,
              policy_id: "prod",
              reasons: [{ code: "prod_write", message: "writes under /srv need a person" }],
            };
          if (path.startsWith("/etc/"))
            return { allow: false, policy_id: "prod", reasons: [{ code: "system_path", message: "never under /etc" }] };
          return { allow: true, reasons: [] };
        },
      }),
    });
  },
});

async function setup(calls: Parameters<typeof callThenReport>[0], approval: Record<string, unknown>) {
  const ledger: Ledger = [];
  const { client } = await approvalClient({
    dir: temp.tempDir("antler-approval-ask-"),
    ledger,
    script: callThenReport(calls),
    approval,
    config: { guardrails: { enabled: true, providers: [{ use: "prod" }] } },
    plugins: [prodPolicy],
  });
  open.push(client);
  return { client, ledger };
}

const SRV = { name: "write_file", args: { path: "/srv/app.conf", content: "x" }, id: "call_srv" };

describe("a guardrail decision `ask` with an approval rule `guardrail: ask`", () => {
  it("pauses with the provider's reasons; once approved, the Guardrail middleware lets the call run once", async () => {
    const { client, ledger } = await setup([SRV, { name: "write_file", args: { path: "/etc/passwd", content: "x" }, id: "call_etc" }], {
      rules: [{ name: "policy-asks", guardrail: "ask" }],
    });
    const first = await client.invoke("deploy", { threadId: "t1" });
    expect(first.status).toBe("paused");
    // Only the call the policy asked about waits; the denied one is not a question for a person.
    expect(first.interrupt?.calls).toEqual([
      {
        tool_call_id: "call_srv",
        tool: "write_file",
        args: SRV.args,
        rule: "policy-asks",
        reason: "prod_write: writes under /srv need a person",
      },
    ]);
    const done = await client.resume("t1", first.run_id, { decision: "approve" });
    expect(ledger).toEqual([{ tool: "write_file", args: SRV.args }]);
    expect(done.output).toContain('[call_etc] Refused: write_file was not run: denied by policy "prod"');
  });

  it("without such a rule, `ask` is a denial, as before", async () => {
    const { client, ledger } = await setup([SRV], { rules: [{ tools: ["bash"] }] });
    const result = await client.invoke("deploy", { threadId: "t1" });
    expect(result.status).toBe("success");
    expect(ledger).toEqual([]);
    expect(result.output).toContain("prod_write: writes under /srv need a person");
  });
});
