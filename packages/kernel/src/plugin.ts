import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { z } from "zod";
import type { KernelConfig, ModelConfig } from "./config/schema.js";
import { createToken, type Provider, type Scope, type Token } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import type { HookTiming, KernelHooks, RunInfo, RunOutcome, StageName } from "./hooks.js";
import type { Logger } from "./logging.js";
import type { CreateModelOptions, ModelInfo, ModelProvider } from "./models/contract.js";
import type { PluginPaths } from "./paths.js";
import type {
  MiddlewareAssemblyContext,
  MiddlewareEntry,
  MiddlewareFactory,
  MiddlewarePlacement,
  MiddlewareSpec,
} from "./pipeline/types.js";
import type { SandboxProvider } from "./sandbox/types.js";
import type { AntlerDatabase, Checkpointer, OpenCheckpointerOptions, OpenDatabaseOptions, StorageBackend } from "./storage/contract.js";
import type { AntlerTool, GetAvailableToolsOptions, ToolAssemblyContext, ToolEntry, ToolSource } from "./tools.js";

export type { PluginPaths };

/** The name the kernel registers its own services under. */
export const KERNEL_OWNER = "@antler/kernel";

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
  /** Top-level config.yaml sections this plugin owns (e.g. the runtime's `title:`), validated while it is loaded. */
  readonly configSections?: Readonly<Record<string, z.ZodType>> | undefined;
  /** Synchronous: bind tokens, tap hooks, add tools, middleware and commands. No I/O here; do that in `start`. */
  setup(ctx: PluginContext<C>): void;
}

/** What `definePlugin` takes: an `AntlerPlugin` whose `setup` sees the config type its `configSchema` produces. */
export type PluginDefinition<S extends z.ZodType | undefined> = Omit<AntlerPlugin, "configSchema" | "setup"> & {
  configSchema?: S;
  setup(ctx: PluginContext<S extends z.ZodType ? z.output<S> : undefined>): void;
};

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

export interface ToolContribution {
  /** Tool group (`bash`, `file:read`, `file:write`, `web`, `browser`, ...) that `getAvailableTools({ groups })` and a custom agent's `tool_groups` filter on. */
  group?: string;
  /**
   * Running it twice with the same arguments does no harm (reads, searches, fetches). When a run is taken over after
   * its process stopped, a call that was in flight is retried only if its tool says so; otherwise the model is told
   * it was interrupted and not retried. Default false.
   */
  idempotent?: boolean;
  /** Default `plugin`; `builtin`, `mcp`, `acp` and `subagent` pick the matching assembly stage. */
  source?: ToolSource;
  stage?: StageName;
  /** The name of the tool a factory builds, so `antler plugins list` and `config check` name it without building it. */
  name?: string;
}

/**
 * A tool, or a factory that decides per assembly (return null to leave it out, e.g. for non-vision models). A
 * factory may be async, so a plugin can import its tool modules on first use instead of at load.
 */
export type ToolProvider =
  | AntlerTool
  | ((context: ToolAssemblyContext) => AntlerTool | null | undefined | Promise<AntlerTool | null | undefined>);

/** One `--name` a command takes. A value is checked before `run`: a bad one exits 2 naming the option and what it allows. */
export interface CliOptionSpec {
  /** `boolean` is a flag; `integer` and `number` are parsed; `string` may be limited to `choices`. Default string. */
  type?: "string" | "boolean" | "integer" | "number";
  /** One letter, as in `-n`. `-c`, `-h` and `-v` are the CLI's own. */
  short?: string;
  description?: string;
  choices?: readonly string[];
  default?: string | number | boolean;
  required?: boolean;
  /** The value's name in the usage line, as in `--limit <n>`. Default: `value`. */
  placeholder?: string;
}

/** One word a command takes after its name, in order. */
export interface CliPositionalSpec {
  name: string;
  description?: string;
  required?: boolean;
}

/** The value type of one declared option: absent unless it is required or has a default. */
export type CliOptionValue<S extends CliOptionSpec> =
  | (S["type"] extends "boolean" ? boolean : S["type"] extends "integer" | "number" ? number : string)
  | (S extends { required: true } | { default: string | number | boolean } ? never : undefined);

/** What a command that declares its options gets beside CliIO: the checked values. */
export interface CliParsed<V> {
  /** The declared options' values, defaults applied. */
  readonly options: Readonly<V>;
  /** The declared positionals' values, by name. */
  readonly positionals: Readonly<Record<string, string | undefined>>;
}

/**
 * What `antler <name> ...` runs. Plugins contribute commands; the CLI dispatches to them. A command that declares
 * `options` (`{}` for none) and `positionals` gets them parsed and checked into `io.options` and `io.positionals`, and
 * its `--help` is written from them; an unknown option, a bad value or a missing required one exits 2 before `run`.
 * Without `options`, `run` gets the raw words and checks them itself.
 */
export interface CliCommand<O extends Record<string, CliOptionSpec> = never> {
  /** Space-separated words, e.g. "mcp reset" or "batch status". */
  name: string;
  summary: string;
  /** The usage line; default: written from `options` and `positionals`. */
  usage?: string;
  options?: O;
  positionals?: readonly CliPositionalSpec[];
  run(
    args: string[],
    io: [O] extends [never] ? CliIO : CliIO & CliParsed<{ [K in keyof O]: CliOptionValue<O[K]> }>,
  ): Promise<number> | number;
}

export interface CliIO {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The booted kernel the command runs against. */
  readonly kernel: Kernel;
  /** Standard input, when the command may read it (`antler chat`). */
  readonly stdin?: NodeJS.ReadableStream | undefined;
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
  readonly commands: { add<O extends Record<string, CliOptionSpec> = never>(command: CliCommand<O>): void };
  /** Register a model provider (picked by `provider:` in `models:`), or build a configured model at run time. */
  readonly models: { addProvider(provider: ModelProvider): void; create: Kernel["createModel"] };
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
  /**
   * Register a storage backend (picked by `storage.backend` / `storage.checkpointer`), or open a handle on the
   * configured one at run time. Each open returns a handle the caller closes.
   */
  readonly storage: {
    addBackend(backend: StorageBackend): void;
    openDatabase(options?: OpenDatabaseOptions): Promise<AntlerDatabase>;
    openCheckpointer(options?: OpenCheckpointerOptions): Promise<Checkpointer>;
  };
}

/** What a plugin contributed, for `antler plugins list` and diagnostics. */
export interface PluginContributions {
  tools: string[];
  middlewares: string[];
  providers: string[];
  commands: string[];
  hooks: string[];
}

/** Where a plugin came from, for messages and `antler plugins list`. */
export interface PluginOrigin {
  readonly kind: "package" | "path" | "code" | "builtin" | "preset";
  /** The package name or path as written, or the plugin name for code plugins. */
  readonly spec: string;
  /** Config path of the entry (`plugins[2]`), or a description for code plugins. */
  readonly where: string;
  /** The file that was imported, if any. */
  readonly file?: string | undefined;
}

export interface LoadedPluginInfo {
  readonly name: string;
  readonly version: string;
  readonly description: string | undefined;
  readonly origin: PluginOrigin;
  readonly dependsOn: readonly string[];
  readonly configSchema: z.ZodType | undefined;
  readonly configSections: Readonly<Record<string, z.ZodType>>;
  readonly contributions: Readonly<PluginContributions>;
}

export interface RunOptions {
  runId?: string | undefined;
  threadId?: string | undefined;
  userId?: string | undefined;
  /** A trace id carried in from the caller, used outside a trace scope (inside one, the scope's id wins); unusable ids are replaced. */
  traceId?: string | null | undefined;
  signal?: AbortSignal | undefined;
}

export interface RunContext extends RunInfo {
  readonly scope: Scope;
  readonly signal: AbortSignal;
}

export interface ActiveRun {
  readonly context: RunContext;
  /** Rejects with RUN_CANCELLED when the run's signal aborts. */
  readonly cancelled: Promise<never>;
  abort(reason?: unknown): void;
  /** Fires runError (for "error") and runEnd, then disposes the run scope. Idempotent. */
  end(outcome: RunOutcome, error?: unknown): Promise<void>;
}

export type KernelState = "booted" | "starting" | "started" | "closing" | "closed";

/** A booted kernel: what `createKernel` returns, CLI commands receive, and `KERNEL` resolves to. */
export interface Kernel {
  readonly hooks: KernelHooks;
  readonly config: Readonly<KernelConfig>;
  readonly paths: PluginPaths;
  readonly logger: Logger;
  /** The root DI scope: one per kernel. */
  readonly scope: Scope;
  readonly plugins: readonly LoadedPluginInfo[];
  readonly commands: ReadonlyArray<CliCommand & { plugin: string }>;
  /** Every registered DI token and the plugin that owns it. */
  readonly tokens: ReadonlyArray<{ token: string; owner: string }>;
  /** Recent hook tap timings (bounded), newest last. Also on diagnostics_channel `antler:hook`. */
  readonly timings: readonly HookTiming[];
  readonly status: KernelState;
  /** The configured models, safe to show (no keys). */
  listModels(): ModelInfo[];
  /** The `models:` entry by name; without a name, `default_model` or the first entry. */
  modelConfig(name?: string): ModelConfig;
  /** Builds the chat model for a `models:` entry through the provider a plugin registered; `thinking` picks a `when_thinking_*` block. */
  createModel(name?: string, options?: CreateModelOptions): Promise<BaseChatModel>;
  /** The sandbox provider `sandbox.provider` selects; without that key, the only registered one. */
  sandboxProvider(): SandboxProvider;
  /** Opens Antler's tables on the configured storage backend, applying `migrations`. The caller closes it. */
  openDatabase(options?: OpenDatabaseOptions): Promise<AntlerDatabase>;
  /** Opens the configured checkpointer (`storage.checkpointer`, default the backend). The caller closes it. */
  openCheckpointer(options?: OpenCheckpointerOptions): Promise<Checkpointer>;
  /** The ordered middleware chain for one agent build: the default slots in order, plugin middleware placed. */
  assembleMiddleware(context?: Partial<MiddlewareAssemblyContext>): Promise<MiddlewareEntry[]>;
  /** Tool entries with provenance, after the group filter and duplicate resolution. */
  assembleTools(options?: GetAvailableToolsOptions): Promise<ToolEntry[]>;
  /** The tools an agent gets (filtered by group): config tools, built-ins, then MCP, ACP and subagent tools. */
  getAvailableTools(options?: GetAvailableToolsOptions): Promise<AntlerTool[]>;
  /** The JSON Schema of config.yaml with every loaded plugin's config schema composed in. */
  configJsonSchema(): Record<string, unknown>;
  /**
   * Runs one unit of work in a trace scope and a fresh child DI scope, disposed when the run ends: on success,
   * on error, and on cancel (the signal aborting ends the run at once with RUN_CANCELLED).
   */
  run<T>(fn: (run: RunContext) => Promise<T> | T, options?: RunOptions): Promise<T>;
  /** The lower-level form of `run` for work that yields between steps. Call inside a trace scope; `end` exactly once. */
  beginRun(options?: RunOptions): Promise<ActiveRun>;
  /** Runs every `start` tap in stage order. If one fails, the kernel is closed and the error rethrown. */
  start(): Promise<void>;
  /** Runs every `stop` tap in reverse order (all of them, even after a failure), then disposes services. Idempotent. */
  close(): Promise<void>;
}

/**
 * The kernel itself, bound in its root scope. For plugins that run agents of their own at run time (subagents,
 * batch workers): they resolve it lazily from a factory's scope, never in `setup`.
 */
export const KERNEL = createToken<Kernel>("antler.kernel");
