// `@antler/plugin-runtime/testing`: the scaffolding a model provider's tests share, in-tree or third-party. A provider
// test drives its plugin against a loopback copy of the vendor's API twice over: through a bare kernel
// (`createModel`, config errors) and through a client running real turns with a tool to call. It lives here and
// not in `@antler/model-kit/testing` because the client is the runtime's (model-kit does not depend on it).
import { type CodePlugin, createKernel, definePlugin, type Kernel, type KernelConfigInput, silentLogger } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { z } from "zod";
import { AntlerClient } from "./client/client.js";
import type { StreamEvent } from "./client/events.js";

/** One entry of the config's `models:` list. */
export type ModelEntry = NonNullable<KernelConfigInput["models"]>[number];

/** A tool plugin for tool-calling turns: `get_weather({ city })` answers `sunny in <city>`. */
export const weatherTools = definePlugin({
  name: "weather-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "get_weather",
        description: "Current weather for a city.",
        schema: z.object({ city: z.string() }),
        run: ({ city }) => `sunny in ${city}`,
      }),
    );
  },
});

/** Every event of a stream (`client.stream(...)`), once it has ended. */
export async function collectStream(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

export interface ProviderTestKitOptions {
  /**
   * Receives the close of every kernel and client the kit makes, as it makes them. Keep them with the test's other
   * cleanups (its loopback servers) and run them after each test, last made first.
   */
  onClose(close: () => Promise<void>): void;
}

export interface KernelWithOptions {
  /** The kernel's environment, where the provider looks up its key (`OPENAI_API_KEY`, ...). Default: empty. */
  env?: Record<string, string>;
  /** Another build of the provider plugin (one made by a factory with other defaults). Default: the kit's. */
  plugin?: CodePlugin;
}

export interface ProviderTestKit {
  /** A kernel with the provider plugin alone and `models`: no discovery, a silent logger, not started. */
  kernelWith(models: readonly ModelEntry[], options?: KernelWithOptions): Promise<Kernel>;
  /**
   * A client with the provider plugin and `weatherTools`, on in-memory storage with thread titles off, warnings
   * logged and an empty environment: the first model is the agent's.
   */
  clientWith(models: ModelEntry | readonly ModelEntry[]): Promise<AntlerClient>;
}

/**
 * The kernels and clients of a provider's tests. Example:
 * `const { kernelWith, clientWith } = providerTestKit(openaiPlugin, { onClose: (close) => cleanups.push(close) })`.
 */
export function providerTestKit(plugin: CodePlugin, options: ProviderTestKitOptions): ProviderTestKit {
  return {
    async kernelWith(models, kernelOptions = {}) {
      const kernel = await createKernel({
        plugins: [kernelOptions.plugin ?? plugin],
        config: { models: [...models] },
        discover: false,
        env: kernelOptions.env ?? {},
        logger: silentLogger(),
      });
      options.onClose(() => kernel.close());
      return kernel;
    },
    async clientWith(models) {
      const client = await AntlerClient.create({
        config: {
          models: Array.isArray(models) ? [...models] : [models as ModelEntry],
          storage: { backend: "memory" },
          title: { enabled: false },
          logging: { level: "warn" },
        },
        plugins: [plugin, weatherTools],
        env: {},
        discover: false,
      });
      options.onClose(() => client.close());
      return client;
    },
  };
}
