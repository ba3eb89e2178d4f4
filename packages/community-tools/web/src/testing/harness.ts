import type { AntlerPlugin, AntlerTool } from "@antler/kernel";
import { createTestKernel } from "@antler/kernel/testing";
import type { ToolMessage } from "@langchain/core/messages";
import { afterEach } from "vitest";
import type { WebToolsConfigInput } from "../config.js";
import { createWebToolsPlugin, type WebToolsPluginOptions } from "../plugin.js";

type Config = Record<string, unknown>;

export interface WebToolsHarnessOptions {
  /** The provider plugin under test. */
  readonly providerPlugin: AntlerPlugin;
  /**
   * The provider's config in every kernel (a function when it depends on a server started in `beforeAll`);
   * `tool()`'s `providerConfig` is merged over it.
   */
  readonly providerConfig?: Config | (() => Config) | undefined;
  /** `@antler/tools-web`'s config in every kernel; `tool()`'s `webConfig` is merged over it. */
  readonly webConfig?: WebToolsConfigInput | undefined;
  /** Options of `createWebToolsPlugin` (a stub `lookup`, a fast `sleep`, ...). */
  readonly webOptions?: WebToolsPluginOptions | undefined;
}

export interface WebToolsHarness {
  /** Boots a kernel with `@antler/tools-web` and the provider plugin, and returns its tool `name`. */
  tool(name: string, providerConfig?: Config, webConfig?: WebToolsConfigInput): Promise<AntlerTool>;
  /** Calls `tool` the way an agent does and returns the ToolMessage. */
  invoke(tool: AntlerTool, args: Record<string, unknown>): Promise<ToolMessage>;
  /** `tool()`, returned as a function of the call's arguments. */
  caller(
    name: string,
    providerConfig?: Config,
    webConfig?: WebToolsConfigInput,
  ): Promise<(args: Record<string, unknown>) => Promise<ToolMessage>>;
  /** Closes every kernel booted so far (done after each test automatically). */
  close(): Promise<void>;
}

/**
 * The scaffolding of a provider's tool tests: each `tool()` boots a test kernel with `@antler/tools-web`
 * (configured by `webConfig`) and the provider plugin (configured by `providerConfig`), and every kernel is
 * closed after each test. Call it inside a `describe`.
 */
export function webToolsHarness(options: WebToolsHarnessOptions): WebToolsHarness {
  const kernels: Array<{ close(): Promise<void> }> = [];
  const close = async () => {
    await Promise.all(kernels.splice(0).map((k) => k.close()));
  };
  afterEach(close);

  async function tool(name: string, providerConfig: Config = {}, webConfig: WebToolsConfigInput = {}): Promise<AntlerTool> {
    const base = typeof options.providerConfig === "function" ? options.providerConfig() : (options.providerConfig ?? {});
    const kernel = await createTestKernel({
      plugins: [
        { plugin: createWebToolsPlugin(options.webOptions), config: { ...options.webConfig, ...webConfig } },
        { plugin: options.providerPlugin, config: { ...base, ...providerConfig } },
      ],
    });
    kernels.push(kernel);
    const found = (await kernel.getAvailableTools()).find((t) => t.name === name);
    if (!found) throw new Error(`${name} is not among the kernel's tools`);
    return found;
  }

  const invoke = async (t: AntlerTool, args: Record<string, unknown>) =>
    (await t.invoke({ type: "tool_call", id: "call_1", name: t.name, args })) as ToolMessage;

  return {
    tool,
    invoke,
    async caller(name, providerConfig, webConfig) {
      const found = await tool(name, providerConfig, webConfig);
      return (args) => invoke(found, args);
    },
    close,
  };
}
