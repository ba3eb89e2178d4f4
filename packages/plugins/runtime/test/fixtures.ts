import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type ScriptedStep, useTempDirs } from "@antler/kernel/testing";
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";

export const { tempDir, writeFiles } = useTempDirs();

/** A plugin with one tool, `get_weather({ city })`, answering `<city>: 21°C, clear`. */
export const weatherToolsPlugin = definePlugin({
  name: "weather-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "get_weather",
        description: "Weather for a city.",
        schema: z.object({ city: z.string() }),
        run: ({ city }) => `${city}: 21°C, clear`,
      }),
    );
  },
});

/** A scripted model's turn: call `get_weather` for `city`, then answer with what it said. */
export const weatherThenAnswer =
  (city: (messages: BaseMessage[]) => string | undefined = () => "Oslo") =>
  (messages: BaseMessage[]): ScriptedStep =>
    messages.at(-1)?.getType() === "tool"
      ? { text: `It is ${String(messages.at(-1)?.content)}.` }
      : { toolCalls: [{ name: "get_weather", args: { city: city(messages) } }] };
