import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { z } from "zod";
import type { KernelConfig } from "./config/schema.js";
import type { Provider, Scope, Token } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import type { HookName, KernelHooks, RunInfo, RunOutcome, StageName } from "./hooks.js";
import type { Logger } from "./logging.js";
import type { ModelProvider } from "./models.js";
import type {
  MiddlewareAssemblyContext,
  MiddlewareEntry,
  MiddlewareFactory,
  MiddlewarePlacement,
  MiddlewareSpec,
} from "./pipeline/types.js";
import type { SandboxProvider } from "./sandbox/types.js";
import type { AntlerTool, ToolAssemblyContext, ToolEntry, ToolSource } from "./tools.js";

const PLUGIN_BRAND = Symbol.for("antler.plugin");

/** What a plugin module default-exports. Build it with `definePlugin`. */
export interface AntlerPlugin<C = unknown> {
  /** Unique name; also the tap name, the middleware-name prefix and the DI owner label. */
  readonly name: string;
  readonly version: string;
  /** Semver range of kernels this plugin fits, e.g. "^0.1.0". Checked at load. */
  readonly kernel: string;
  readonly description?: string | undefined;
  /** Plugins that must load first. A missing one fails the boot with a coded error. */
  readonly dependsOn?: readonly string[] | undefined;
  /** zod schema of `plugins[i].config`; unknown keys are rejected unless the schema opts in with `.loose()`. */
  readonly configSchema?: z.ZodType<C> | undefined;
  /** Synchronous: bind tokens, tap hooks, add tools, middleware and commands. No I/O here; do that in `start`. */
  setup(ctx: PluginContext<C>): void;
}

export interface PluginDefinition<S extends z.ZodType | undefined> {
  name: string;
  version: string;
  kernel: string;
  description?: string;
  dependsOn?: readonly string[];
  configSchema?: S;
  setup(ctx: PluginContext<S extends z.ZodType ? z.output<S> : undefined>): void;
}

/** Declares a plugin. The result is an ordinary frozen object; plain objects of the same shape also load. */
export function definePlugin<S extends z.ZodType | undefined = undefined>(
  definition: PluginDefinition<S>,
): AntlerPlugin<S extends z.ZodType ? z.output<S> : undefined> {
  if (definition === null || typeof definition !== "object") {
    throw new AntlerError(ErrorCodes.PLUGIN_INVALID_MANIFEST, "definePlugin needs a plugin definition object");
  }
  return Object.freeze({ ...definition, [PLUGIN_BRAND]: true }) as unknown as AntlerPlugin<S extends z.ZodType ? z.output<S> : undefined>;
}

export function isBrandedPlugin(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[PLUGIN_BRAND] === true;
}

export interface TapOptions {
  stage?: StageName;
}

type HookArgs<H extends HookName> = KernelHooks[H] extends { promise(...args: infer A): unknown }
  ? A
  : KernelHooks[H] extends { call(...args: infer A): unknown }
    ? A
    : never;

/** A plugin's view of one kernel hook: taps are named after the plugin automatically. */
export interface HookTap<Args extends unknown[], R> {
  tap(fn: (...args: Args) => R | Promise<R>, options?: TapOptions): void;
}

export interface PluginHooks {
  readonly boot: { tap(fn: () => void, options?: TapOptions): void };
  readonly start: HookTap<[], void>;
  readonly stop: HookTap<[], void>;
  readonly assembleTools: HookTap<[tools: ToolEntry[], context: ToolAssemblyContext], ToolEntry[]>;
  readonly assembleMiddleware: HookTap<[middleware: MiddlewareEntry[], context: MiddlewareAssemblyContext], MiddlewareEntry[]>;
  readonly runStart: HookTap<[run: RunInfo], void>;
  readonly runEnd: HookTap<[run: RunInfo, outcome: RunOutcome], void>;
  readonly runError: HookTap<[run: RunInfo, error: unknown], void>;
}

export type { HookArgs };

export interface ToolContribution {
  /** Tool group, for `getAvailableTools({ groups })` filtering of config tools. */
  group?: string;
  /** Default `plugin`; `builtin`, `mcp`, `acp` and `subagent` pick the matching assembly stage. */
  source?: ToolSource;
  stage?: StageName;
}

/** A tool, or a factory that decides per assembly (return null to leave it out, e.g. for non-vision models). */
export type ToolProvider = AntlerTool | ((context: ToolAssemblyContext) => AntlerTool | null | undefined);

/** What `antler <name> ...` runs. Plugins contribute commands; the CLI dispatches to them. */
export interface CliCommand {
  /** Space-separated words, e.g. "mcp reset" or "batch status". */
  name: string;
  summary: string;
  usage?: string;
  run(args: string[], io: CliIO): Promise<number> | number;
}

export interface CliIO {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The booted kernel the command runs against. */
  readonly kernel: import("./kernel.js").Kernel;
}

export interface PluginPaths {
  /** Folder of config.yaml (or the working directory without one). */
  readonly configDir: string;
  readonly configFile: string | null;
  /** Antler's data folder (`base_dir`, `.antler/` by default), absolute. */
  readonly baseDir: string;
}

/** Everything a plugin's `setup` may use. Nothing here does I/O. */
export interface PluginContext<C = unknown> {
  readonly plugin: { readonly name: string; readonly version: string };
  /** This plugin's validated `plugins[i].config` (schema defaults applied). */
  readonly config: C;
  readonly kernelConfig: Readonly<KernelConfig>;
  readonly paths: PluginPaths;
  /** A child logger labelled with the plugin's name. */
  readonly logger: Logger;
  readonly hooks: PluginHooks;
  /** Binds a DI token in the kernel's root scope (or per run with `lifetime: "run"`). */
  provide<T>(token: Token<T>, provider: Provider<T>): void;
  /**
   * The kernel's root scope. In `setup` it resolves what earlier plugins bound (list their names in `dependsOn`
   * so they set up first); from `hooks.start` on, every plugin's tokens. Run-scoped tokens resolve only in a run.
   */
  readonly services: Scope;
  readonly tools: { add(tool: ToolProvider, options?: ToolContribution): void };
  readonly commands: { add(command: CliCommand): void };
  /** Register a model provider (picked by `provider:` in `models:`), or build a configured model at run time. */
  readonly models: { addProvider(provider: ModelProvider): void; create(name?: string): Promise<BaseChatModel> };
  /**
   * Add middleware to the agent pipeline: a spec, or a factory decided per agent build. Names are namespaced
   * `<plugin>/<name>`. Placement: `{ before | after: "<name>" }`, `{ stage }`, or `{ replace, override: true }`.
   */
  readonly middleware: { add(middleware: MiddlewareSpec | MiddlewareFactory, placement?: MiddlewarePlacement): void };
  /**
   * Register a sandbox provider (picked by `sandbox.provider`), or get the selected one at run time. The kernel
   * closes registered providers when it closes.
   */
  readonly sandbox: { addProvider(provider: SandboxProvider): void; provider(): SandboxProvider };
}

/** What a plugin contributed, for `antler plugins list` and diagnostics. */
export interface PluginContributions {
  tools: string[];
  middlewares: string[];
  providers: string[];
  commands: string[];
  hooks: string[];
}
