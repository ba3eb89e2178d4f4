import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { antlerCliBuilt, startAntlerServe, startOpenAICompatibleServer } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import { onCleanup, temp } from "./fixtures.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const dists = {
  guardrails: resolve(here, "../dist/index.js"),
  gateway: resolve(here, "../../gateway/dist/index.js"),
  openai: resolve(here, "../../openai/dist/index.js"),
};
const built = Object.values(dists).every((p) => existsSync(p)) && antlerCliBuilt();

/** Names of the tools a recorded Chat Completions request bound. */
const boundTools = (request: { body: unknown } | undefined): string[] =>
  ((request?.body as { tools?: Array<{ function: { name: string } }> } | undefined)?.tools ?? []).map((t) => t.function.name);

const ALICE_KEY = "alice-key-0123456789abcdef";
const ROOT_KEY = "root-key-0123456789abcdef01";

describe.skipIf(!built)("authorization under `antler serve` (compiled CLI in a child process; needs a build first)", () => {
  it("API-key roles: a user key gets 403 on a forbidden model, never sees bash, and its forged bash call is refused; an admin's runs", async () => {
    // The model is an OpenAI-compatible server on loopback: it calls bash until it sees a tool result.
    const model = await startOpenAICompatibleServer({
      handler: (body) =>
        body.messages.at(-1)?.role === "tool" ? { text: "done" } : { toolCalls: [{ name: "bash", args: { command: "id" } }] },
    });
    onCleanup(() => model.close());
    const dir = temp.tempDir("antler-guardrails-serve-");
    const marker = join(dir, "bash-ran");
    writeFileSync(
      join(dir, "shell-tool.mjs"),
      [
        'import { appendFileSync } from "node:fs";',
        "export default ({ definePlugin, defineTool, z }) => definePlugin({",
        '  name: "test-shell", version: "1.0.0", kernel: "^0.1.0",',
        "  setup(ctx) {",
        "    ctx.tools.add(defineTool({",
        '      name: "bash", description: "Runs a command.", schema: z.object({ command: z.string() }),',
        `      run: ({ command }) => { appendFileSync(${JSON.stringify(marker)}, command + "\\n"); return "ran"; },`,
        '    }), { group: "bash" });',
        "  },",
        "});",
        "",
      ].join("\n"),
    );
    const modelEntry = (name: string) =>
      [
        `  - name: ${name}`,
        "    provider: openai",
        "    model: scripted-model",
        `    base_url: ${model.url}`,
        "    api_key: test-key",
      ].join("\n");
    writeFileSync(
      join(dir, "config.yaml"),
      [
        "storage:",
        "  backend: sqlite",
        "title:",
        "  enabled: false",
        "models:",
        modelEntry("small"),
        modelEntry("big"),
        "plugins:",
        `  - path: ${JSON.stringify(dists.openai)}`,
        "  - path: ./shell-tool.mjs",
        `  - path: ${JSON.stringify(dists.guardrails)}`,
        `  - path: ${JSON.stringify(dists.gateway)}`,
        "    config:",
        "      auth:",
        "        api_keys:",
        "          - { key: $ALICE_KEY, user: alice, role: user }",
        "          - { key: $ROOT_KEY, user: root, role: admin }",
        "authorization:",
        "  enabled: true",
        "  default_role: user",
        "  roles:",
        '    admin: { tool_groups: ["*"], models: ["*"] }',
        "    user: { tool_groups: [web, file:read], models: [small] }",
        "",
      ].join("\n"),
    );
    const serve = await startAntlerServe({ cwd: dir, env: { ALICE_KEY, ROOT_KEY } });
    onCleanup(async () => {
      await serve.stop();
    });
    const { url } = serve;
    const post = (key: string, path: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    await post(ALICE_KEY, "/api/threads", { thread_id: "t1" });
    const forbidden = await post(ALICE_KEY, "/api/threads/t1/runs/wait", { message: "hi", model: "big" });
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { error: { code: string } }).error.code).toBe("ANTLER_ERR_MODEL_FORBIDDEN");
    expect(model.requests).toHaveLength(0);

    const asUser = await post(ALICE_KEY, "/api/threads/t1/runs/wait", {
      message: "run id",
      model: "small",
      context: { user_role: "admin" },
    });
    expect(asUser.status).toBe(200);
    const bound = boundTools(model.requests[0]);
    expect(bound).not.toContain("bash");
    expect(existsSync(marker)).toBe(false);
    const userResult = (await asUser.json()) as { values: { messages: Array<{ type: string; content: string; status?: string }> } };
    const refusal = userResult.values.messages.find((m) => m.type === "tool");
    expect(refusal?.status).toBe("error");
    expect(refusal?.content).toContain('- role_forbids_tool_group: role "user" may not use tools of group "bash"');

    await post(ROOT_KEY, "/api/threads", { thread_id: "t2" });
    const asAdmin = await post(ROOT_KEY, "/api/threads/t2/runs/wait", { message: "run id", model: "big" });
    expect(asAdmin.status).toBe(200);
    const adminBound = boundTools(model.requests.at(-2));
    expect(adminBound).toContain("bash");
    expect(existsSync(marker)).toBe(true);
  });
});
