import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../src/authoring.js";
import { definePlugin, type Kernel } from "../src/index.js";
import { createTestKernel } from "../src/testing/index.js";

const echoTools = definePlugin({
  name: "echo-tools",
  version: "0.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({ name: "echo", description: "Echoes its text.", schema: z.object({ text: z.string() }), run: ({ text }) => text }),
    );
  },
});

let kernel: Kernel | undefined;
afterEach(async () => {
  await kernel?.close();
  kernel = undefined;
});

describe("declared model capabilities", () => {
  it("a model with supports_tools: false is offered no tools; a model without the key gets them", async () => {
    kernel = await createTestKernel({
      plugins: [echoTools],
      configText:
        "models:\n  - name: plain\n    provider: scripted\n    supports_tools: false\n  - name: agentic\n    provider: scripted\n",
    });
    expect(await kernel.getAvailableTools({ modelName: "plain" })).toEqual([]);
    expect((await kernel.getAvailableTools({ modelName: "agentic" })).map((t) => t.name)).toContain("echo");
  });
});
