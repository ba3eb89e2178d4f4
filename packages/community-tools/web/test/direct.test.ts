import { createTestKernel } from "@antler/kernel/testing";
import type { ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { createWebToolsPlugin, registerWebProvider, WEB_PROVIDERS } from "../src/index.js";
import { runWebToolConformance, startLoopbackServer } from "../src/testing/index.js";

// The built-in keyless provider against a loopback "web site": the kit serves the page as HTML.
runWebToolConformance({
  provider: "direct",
  plugins: () => [],
  fetchUrl: (serverUrl) => `${serverUrl}/articles/antlers`,
  webConfig: { allow_private_addresses: true },
  vendor: {
    fetch: (page) => ({ status: 200, body: page.html, headers: { "content-type": "text/html; charset=utf-8" } }),
  },
});

describe("@antler/tools-web plugin", () => {
  const kernels: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(kernels.splice(0).map((k) => k.close()));
  });

  it("serves web_fetch with the keyless direct provider by default, and no search tools", async () => {
    const kernel = await createTestKernel({ plugins: [createWebToolsPlugin()] });
    kernels.push(kernel);
    expect((await kernel.getAvailableTools()).map((t) => t.name).filter((n) => n.startsWith("web_") || n === "image_search")).toEqual([
      "web_fetch",
    ]);
    expect(kernel.scope.resolve(WEB_PROVIDERS).names()).toEqual(["direct"]);
  });

  it("fails the boot naming the config path and the registered providers when a provider is unknown", async () => {
    const err = await createTestKernel({ plugins: [{ plugin: createWebToolsPlugin(), config: { search: "tavily" } }] }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "ANTLER_ERR_CONFIG_INVALID" });
    expect(String((err as Error).message)).toContain("plugins[@antler/tools-web].config.search");
    expect(String((err as Error).message)).toContain('web provider "tavily" is not registered');
    expect(String((err as Error).message)).toContain("Registered providers: direct");
  });

  it("fails the boot when the chosen provider cannot serve that tool", async () => {
    const err = await createTestKernel({ plugins: [{ plugin: createWebToolsPlugin(), config: { search: "direct" } }] }).catch(
      (e: unknown) => e,
    );
    expect(String((err as Error).message)).toContain('web provider "direct" cannot serve search');
  });

  it("picks up a provider registered by a plugin that sets up after it", async () => {
    const extra = {
      name: "test-provider-plugin",
      version: "0.0.1",
      kernel: "^0.1.0",
      setup(ctx: Parameters<typeof registerWebProvider>[0]) {
        registerWebProvider(ctx, { name: "canned", search: async () => [{ title: "T", url: "https://x.example/", snippet: "S" }] });
      },
    };
    const kernel = await createTestKernel({ plugins: [{ plugin: createWebToolsPlugin(), config: { search: "canned" } }, extra] });
    kernels.push(kernel);
    const tool = (await kernel.getAvailableTools()).find((t) => t.name === "web_search");
    const message = (await tool?.invoke({ type: "tool_call", id: "c1", name: "web_search", args: { query: "q" } })) as ToolMessage;
    expect(message.status).toBe("success");
    expect(JSON.parse(String(message.content))).toMatchObject({
      provider: "canned",
      results: [{ title: "T", url: "https://x.example/", snippet: "S" }],
    });
  });

  it("refuses a loopback page without allow_private_addresses and names the opt-out", async () => {
    const server = await startLoopbackServer(() => ({ status: 200, body: "<p>internal</p>", headers: { "content-type": "text/html" } }));
    try {
      const kernel = await createTestKernel({ plugins: [createWebToolsPlugin()] });
      kernels.push(kernel);
      const tool = (await kernel.getAvailableTools()).find((t) => t.name === "web_fetch");
      const message = (await tool?.invoke({
        type: "tool_call",
        id: "c2",
        name: "web_fetch",
        args: { url: `${server.url}/page` },
      })) as ToolMessage;
      expect(message.status).toBe("error");
      expect(String(message.content)).toMatch(/127\.0\.0\.1 is a loopback address/);
      expect(String(message.content)).toContain("plugins[@antler/tools-web].config.allow_private_addresses: true");
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});
