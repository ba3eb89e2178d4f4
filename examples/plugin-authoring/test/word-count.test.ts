import { join } from "node:path";
import { createKernel } from "@antler/kernel";
import { pluginAuthoringApi } from "@antler/kernel/authoring";
import { runPluginConformance } from "@antler/kernel/testing";
import { describe, expect, it } from "vitest";
import wordCount from "../word-count.js";

const plugin = wordCount(pluginAuthoringApi);

runPluginConformance(plugin, {
  validConfig: { words_per_minute: 200 },
  invalidConfigs: [{ words_per_minute: "fast" }, { words_per_minute: 10 }],
});

describe("acme-word-count", () => {
  it("loads by path from config.yaml and counts words with the configured reading speed", async () => {
    const kernel = await createKernel({ configPath: join(import.meta.dirname, "..", "config.yaml"), env: {} });
    const tool = (await kernel.getAvailableTools({ groups: ["text"] })).find((t) => t.name === "word_count");
    expect(tool).toBeDefined();
    const text = Array.from({ length: 400 }, () => "word").join(" ");
    expect(JSON.parse(await tool?.invoke({ text }))).toEqual({ words: 400, reading_minutes: 2 });
    await kernel.close();
  });

  it("refuses oversized input with an actionable message instead of throwing", async () => {
    const kernel = await createKernel({ plugins: [{ plugin, config: { max_chars: 10 } }], discover: false });
    const tool = (await kernel.getAvailableTools()).find((t) => t.name === "word_count");
    expect(await tool?.invoke({ text: "far more than ten characters" })).toMatch(/at most 10 .*max_chars/);
  });
});
