import { definePlugin } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { collectStream, providerTestKit } from "../src/testing.js";

// The scripted model provider stands in for a vendor's: the kit treats it like any provider plugin.
const toolThenAnswer = (messages: BaseMessage[]) =>
  messages.at(-1)?.getType() === "tool"
    ? { text: `Forecast: ${String(messages.at(-1)?.content)}.` }
    : { toolCalls: [{ name: "get_weather", args: { city: "Rome" } }] };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

describe("providerTestKit", () => {
  it("makes a kernel with the provider plugin alone (or the build given) and the models given, and hands over its close", async () => {
    const closes: Array<() => Promise<void>> = [];
    const provider = scriptedModelsPlugin({ m: [{ text: "hi" }] });
    const { kernelWith } = providerTestKit(provider, { onClose: (close) => closes.push(close) });
    const kernel = await kernelWith([{ name: "m", provider: "scripted" }]);
    expect(kernel.plugins.map((p) => p.name)).toContain(provider.name);
    expect(kernel.plugins.map((p) => p.name)).not.toContain("weather-tools");
    expect(kernel.config.models.map((m) => m.name)).toEqual(["m"]);
    expect(closes).toHaveLength(1);
    await closes[0]?.();
    expect(kernel.status).toBe("closed");

    const other = definePlugin({
      name: "other-build",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup() {},
    });
    const withOther = await kernelWith([], { plugin: other });
    expect(withOther.plugins.map((p) => p.name)).toContain("other-build");
    expect(withOther.plugins.map((p) => p.name)).not.toContain(provider.name);
    await closes[1]?.();
  });

  it("makes a client whose model can call get_weather, and collects the run's stream to its end", async () => {
    const { clientWith } = providerTestKit(scriptedModelsPlugin({ m: toolThenAnswer }), { onClose: (close) => cleanups.push(close) });
    const client = await clientWith({ name: "m", provider: "scripted" });
    const events = await collectStream(client.stream("Weather in Rome?", { threadId: "t1" }));
    expect(events.at(-1)?.type).toBe("end");
    const tool = events.find((e) => e.type === "messages-tuple" && e.data.type === "tool");
    expect(tool?.type === "messages-tuple" ? tool.data.content : undefined).toBe("sunny in Rome");
    expect(await client.chat("And now?", { threadId: "t2" })).toBe("Forecast: sunny in Rome.");
    expect(cleanups).toHaveLength(1);
  });
});
