import { createTestKernel, runPluginConformance } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import toolSearchPlugin from "../src/index.js";

runPluginConformance(toolSearchPlugin);

describe("tool_search config", () => {
  it("rejects a deferred entry that is not a name or glob, naming the config path", async () => {
    await expect(
      createTestKernel({ plugins: [toolSearchPlugin], config: { tool_search: { enabled: true, deferred: ["web fetch"] } } as never }),
    ).rejects.toThrow(/tool_search\.deferred\[0\]: a tool name or a glob/);
  });

  it("rejects an unknown key with a suggestion", async () => {
    await expect(
      createTestKernel({ plugins: [toolSearchPlugin], config: { tool_search: { enabled: true, auto_promote_topk: 2 } } as never }),
    ).rejects.toThrow(/auto_promote_topk.*auto_promote_top_k/s);
  });

  it("is an unknown section while the plugin is not loaded", async () => {
    await expect(createTestKernel({ plugins: [], config: { tool_search: { enabled: true } } as never })).rejects.toThrow(/tool_search/);
  });
});
