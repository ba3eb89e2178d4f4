import { definePlugin, isAntlerError } from "@antler/kernel";
import { createTestKernel, runPluginConformance } from "@antler/kernel/testing";
import runtimePlugin from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import guardrailsPlugin, { GUARDRAILS_PLUGIN_NAME, GuardrailErrorCodes, registerGuardrailProvider } from "../src/index.js";
import { callOnce, guardedClient, ROLES, toolMessages, turn } from "./fixtures.js";

runPluginConformance(guardrailsPlugin);

const kernels: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const k of kernels.splice(0)) await k.close();
});

async function kernelWith(config: Record<string, unknown>, plugins = [runtimePlugin, guardrailsPlugin]) {
  const kernel = await createTestKernel({ plugins, config: { storage: { backend: "memory" }, ...config }, start: false });
  kernels.push(kernel);
  return kernel;
}

async function bootError(config: Record<string, unknown>): Promise<unknown> {
  return kernelWith(config).then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe("the Guardrail middleware's place in the chain", () => {
  it("sits right after DanglingToolCall and before ToolErrorHandling, for lead agents and subagents", async () => {
    const kernel = await kernelWith({ authorization: ROLES });
    for (const subagent of [false, true]) {
      const names = (await kernel.assembleMiddleware({ subagent })).map((e) => e.name);
      const at = names.indexOf(`${GUARDRAILS_PLUGIN_NAME}/guardrail`);
      expect(at).toBeGreaterThan(-1);
      expect(names[at - 1]).toBe("DanglingToolCall");
      expect(at).toBeLessThan(names.indexOf("ToolErrorHandling"));
    }
  });

  it("is left out when neither guardrails nor authorization is enabled", async () => {
    const kernel = await kernelWith({});
    const names = (await kernel.assembleMiddleware({})).map((e) => e.name);
    expect(names.some((n) => n.includes("guardrail"))).toBe(false);
  });
});

describe("bad guardrails and authorization config", () => {
  it("names an unregistered provider with its config path and the registered ones", async () => {
    const err = await bootError({ guardrails: { enabled: true, providers: [{ use: "opa" }] } });
    expect(isAntlerError(err, GuardrailErrorCodes.PROVIDER_INVALID)).toBe(true);
    expect((err as { where?: string }).where).toBe("guardrails.providers[0].use");
    expect((err as { hint?: string }).hint).toContain("Registered providers: allowlist, http");
  });

  it("locates a provider config error at its key", async () => {
    const err = await bootError({ guardrails: { enabled: true, providers: [{ use: "http", config: { url: "ftp://x" } }] } });
    expect(isAntlerError(err, GuardrailErrorCodes.PROVIDER_INVALID)).toBe(true);
    expect((err as { where?: string }).where).toBe("guardrails.providers[0].config.url");
    expect(String((err as Error).message)).toContain("http:// or https://");
  });

  it("refuses guardrails enabled without a provider, and a default_role that is not a role", async () => {
    const noProvider = await bootError({ guardrails: { enabled: true } });
    expect(String((noProvider as Error).message)).toMatch(/guardrails\.providers.*no provider is configured/s);
    const badRole = await bootError({ authorization: { enabled: true, default_role: "guest", roles: { admin: { tool_groups: ["*"] } } } });
    expect(String((badRole as Error).message)).toMatch(
      /authorization\.default_role.*default_role "guest" is not one of the roles \(admin\)/s,
    );
  });

  it("rejects an unknown key in the sections while the plugin is loaded", async () => {
    const err = await bootError({ authorization: { enabled: true, default_role: "user", roles: { user: { tool_group: ["web"] } } } });
    expect(String((err as Error).message)).toContain("tool_group");
  });
});

describe("third-party providers", () => {
  it("a plugin registers a provider kind that config names with use:, and its denials reach the model", async () => {
    const asked: string[] = [];
    const quota = definePlugin({
      name: "acme-quota",
      version: "1.0.0",
      kernel: "^0.1.0",
      dependsOn: [GUARDRAILS_PLUGIN_NAME],
      setup(ctx) {
        registerGuardrailProvider(ctx, {
          use: "quota",
          create: () => ({
            name: "quota",
            evaluate: (request) => {
              asked.push(`${request.user_id}:${request.tool_name}`);
              return { allow: false, reasons: [{ code: "quota_exhausted", message: "today's tool budget is spent." }], policy_id: "quota" };
            },
          }),
        });
      },
    });
    const { client, calls, runs } = await guardedClient({
      script: callOnce("web_lookup"),
      config: { guardrails: { enabled: true, providers: [{ use: "quota" }] } },
      plugins: [quota],
    });
    await turn(client, "look it up", { threadId: "t1", userId: "carol" });
    expect(asked).toEqual(["carol:web_lookup"]);
    expect(runs.web_lookup).toBe(0);
    expect(String(toolMessages(calls()[1]?.messages ?? [])[0]?.content)).toContain("- quota_exhausted: today's tool budget is spent.");
  });
});

describe("layer 1 and plugin order", () => {
  it("filters tools that a plugin loaded after this one adds at stage last", async () => {
    const late = definePlugin({
      name: "acme-late-tools",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        ctx.hooks.assembleTools.tap(
          (entries) => [
            ...entries,
            { tool: { name: "late_shell" } as never, plugin: "acme-late-tools", source: "plugin" as const, group: "bash" },
            { tool: { name: "late_lookup" } as never, plugin: "acme-late-tools", source: "plugin" as const, group: "web" },
          ],
          { stage: "last" },
        );
      },
    });
    const kernel = await kernelWith({ authorization: ROLES }, [runtimePlugin, guardrailsPlugin, late]);
    const names = (await kernel.getAvailableTools({ context: { user_role: "user" } })).map((t) => t.name);
    expect(names).toContain("late_lookup");
    expect(names).not.toContain("late_shell");
    const admin = (await kernel.getAvailableTools({ context: { user_role: "admin" } })).map((t) => t.name);
    expect(admin).toContain("late_shell");
  });
});
