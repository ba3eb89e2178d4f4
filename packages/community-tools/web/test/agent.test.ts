import { definePlugin } from "@antler/kernel";
import { type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, type SerializedMessage } from "@antler/plugin-runtime";
import { afterEach, describe, expect, it } from "vitest";
import { createWebToolsPlugin, ensureOk, registerWebProvider } from "../src/index.js";
import { type LoopbackServer, startLoopbackServer } from "../src/testing/index.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("@antler/tools-web in an agent run", () => {
  it("keeps the run going when a provider fails: the model reads the error ToolMessage, then fetches a loopback page", async () => {
    const site: LoopbackServer = await startLoopbackServer((req) =>
      req.path === "/api/search"
        ? { status: 401, body: { error: "invalid key" } }
        : {
            body: "<html><head><title>Field notes</title></head><body><article><h1>Field notes</h1><p>Red deer shed their antlers in late winter.</p></article></body></html>",
            headers: { "content-type": "text/html" },
          },
    );
    cleanups.push(() => site.close());

    // A minimal provider plugin, written the way the README says providers are written.
    const vendorPlugin = definePlugin({
      name: "test-vendor",
      version: "0.0.1",
      kernel: "^0.1.0",
      dependsOn: ["@antler/tools-web"],
      setup(ctx) {
        registerWebProvider(ctx, {
          name: "vendor",
          apiKeyEnv: "VENDOR_API_KEY",
          async search(query, _opts, call) {
            const res = await ensureOk("vendor", await call.vendorFetch!(`${site.url}/api/search?q=${encodeURIComponent(query)}`));
            return (await res.json()) as never;
          },
        });
      },
    });

    const script: ScriptFunction = (_messages, i) => {
      if (i === 0) return { toolCalls: [{ id: "s1", name: "web_search", args: { query: "when do red deer shed antlers" } }] };
      if (i === 1) return { toolCalls: [{ id: "f1", name: "web_fetch", args: { url: `${site.url}/notes` } }] };
      return { text: "late winter" };
    };
    const client = await AntlerClient.create({
      config: {
        models: [{ name: "m", provider: "scripted" }],
        storage: { backend: "memory" },
        title: { enabled: false },
        logging: { level: "warn" },
      },
      plugins: [
        scriptedModelsPlugin({ m: script }),
        { plugin: createWebToolsPlugin(), config: { search: "vendor", allow_private_addresses: true } },
        vendorPlugin,
      ],
      env: {},
      discover: false,
    });
    cleanups.push(() => client.close());

    expect(await client.chat("research", { threadId: "t1" })).toBe("late winter");
    const tools = new Map(
      (await client.getThread("t1")).messages
        .filter((m): m is SerializedMessage & { tool_call_id: string } => m.type === "tool")
        .map((m) => [m.tool_call_id, m]),
    );
    expect(tools.get("s1")?.status).toBe("error");
    expect(tools.get("s1")?.content).toContain(
      "vendor rejected the API key (HTTP 401); the key is missing or wrong. Set the VENDOR_API_KEY environment variable",
    );
    expect(tools.get("f1")?.status).toBe("success");
    expect(tools.get("f1")?.content).toContain("# Field notes");
    expect(tools.get("f1")?.content).toContain("Red deer shed their antlers in late winter.");

    // Both the vendor API call and the page fetch carried the run's trace id.
    const traces = site.requests.map((r) => r.headers["x-trace-id"]);
    expect(traces).toHaveLength(2);
    expect(traces[0]).toEqual(expect.any(String));
    expect(traces[1]).toBe(traces[0]);
  });
});
