import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { z } from "zod";
import { loadAuthoring } from "./authoring-api.js";
import { declarationProblem } from "./cli/options.js";
import { type ConfigIssue, formatPath, locate, type PathSegment } from "./config/issues.js";
import { composedConfigJsonSchema } from "./config/json-schema.js";
import {
  type ConfigDocument,
  configDocumentFromObject,
  discoverConfigPath,
  type Env,
  invalidConfig,
  parseConfigText,
  readConfigDocument,
  validateKernelConfig,
  validateSection,
} from "./config/load.js";
import { type KernelConfig, type KernelConfigInput, kernelConfigSchema, type ModelConfig } from "./config/schema.js";
import { findUnknownKeys } from "./config/strict.js";
import type { Provider, Scope, Token } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";
import { createKernelHooks } from "./hook-host.js";
import { type HookName, type HookTiming, type KernelHooks, type RunInfo, type RunOutcome, STAGES, stageNumber } from "./hooks.js";
import { importConfiguredPlugins, importPresetPlugins, orderPlugins, type PluginCandidate, validateManifest } from "./loader.js";
import { createLogger, type Logger } from "./logging.js";
import {
  type CreateModelOptions,
  MODEL_CALL_PLANNER,
  type ModelInfo,
  type ModelProvider,
  modelInfo,
  needsCallPlan,
  thinkingModelConfig,
} from "./models/contract.js";
import { composeChain, DEFAULT_CHAIN } from "./pipeline/compose.js";
import type {
  MiddlewareAssemblyContext,
  MiddlewareEntry,
  MiddlewareFactory,
  MiddlewarePlacement,
  MiddlewareSpec,
} from "./pipeline/types.js";
import {
  type ActiveRun,
  type AntlerPlugin,
  type CliCommand,
  type CliOptionSpec,
  KERNEL,
  KERNEL_OWNER,
  type Kernel,
  type KernelState,
  type LoadedPluginInfo,
  type PluginContext,
  type PluginContributions,
  type PluginHooks,
  type PluginPaths,
  type RunContext,
  type RunOptions,
  type TapOptions,
  type ToolContribution,
  type ToolProvider,
} from "./plugin.js";
import { ProviderRegistry } from "./registry.js";
import type { SandboxProvider } from "./sandbox/types.js";
import { type RunScopeHandle, ServiceRegistry } from "./services.js";
import type { AntlerDatabase, Checkpointer, OpenCheckpointerOptions, OpenDatabaseOptions, StorageBackend } from "./storage/contract.js";
import { StorageRegistry } from "./storage/service.js";
import {
  type AntlerTool,
  builtTool,
  finalizeToolEntries,
  type GetAvailableToolsOptions,
  type ToolEntry,
  toolAssemblyContext,
} from "./tools.js";
import { ensureTraceContext } from "./trace.js";

/** A plugin object passed in code, optionally with its config. */
export type CodePlugin = AntlerPlugin | { plugin: AntlerPlugin; config?: unknown };

export interface CreateKernelOptions {
  /** Path of config.yaml. Without it: `ANTLER_CONFIG`, then `./config.yaml`, then embedded defaults. */
  configPath?: string | undefined;
  /** YAML text to use instead of a file (relative paths resolve against `cwd`). */
  configText?: string | undefined;
  /** A config object composed in code; validated exactly like a file. */
  config?: KernelConfigInput | undefined;
  /** Plugin objects composed in code. They load after the default preset and before `plugins:` entries. */
  plugins?: readonly CodePlugin[] | undefined;
  /** Look for `ANTLER_CONFIG` and `./config.yaml` when no config is given. Default true. */
  discover?: boolean | undefined;
  cwd?: string | undefined;
  env?: Env | undefined;
  /** Where the logger built from `logging:` writes (default stderr), and its level when config sets none. */
  logDestination?: NodeJS.WritableStream | undefined;
  defaultLogLevel?: string | undefined;
  /** Use this logger instead of building one from `logging:`. */
  logger?: Logger | undefined;
  /**
   * Load the default preset (the runtime, cassette models and the storage plugin `storage:` names) unless the
   * config says `preset: none`. Default true; `false` starts from nothing, like `preset: none`.
   */
  builtins?: boolean | undefined;
}

/** The booted plugin host behind the `Kernel` contract (documented there). Build one with `createKernel`. */
export class KernelHost implements Kernel {
  readonly hooks: KernelHooks;
  readonly config: Readonly<KernelConfig>;
  readonly paths: PluginPaths;
  readonly logger: Logger;
  readonly scope: Scope;
  private readonly services = new ServiceRegistry();
  private readonly pluginInfos: LoadedPluginInfo[] = [];
  private readonly commandList: Array<CliCommand & { plugin: string }> = [];
  private readonly providers = new ProviderRegistry<ModelProvider>("model provider");
  private readonly sandboxProviders = new ProviderRegistry<SandboxProvider>("sandbox provider");
  private readonly storage: StorageRegistry;
  private readonly env: Env;
  private readonly hookTimings: HookTiming[] = [];
  private state: KernelState = "booted";
  private closing: Promise<void> | undefined;

  /** @internal use `createKernel` */
  constructor(config: KernelConfig, paths: PluginPaths, logger: Logger, env: Env = process.env) {
    this.config = config;
    this.env = env;
    this.paths = paths;
    this.logger = logger;
    this.hooks = createKernelHooks((timing) => this.recordTiming(timing));
    this.scope = this.services.rootScope();
    this.storage = new StorageRegistry(config.storage, paths.baseDir, logger);
    this.services.register(KERNEL, { useValue: this }, KERNEL_OWNER);
  }

  get plugins(): readonly LoadedPluginInfo[] {
    return this.pluginInfos;
  }

  get commands(): ReadonlyArray<CliCommand & { plugin: string }> {
    return this.commandList;
  }

  get tokens(): ReadonlyArray<{ token: string; owner: string }> {
    return this.services.listTokens();
  }

  get timings(): readonly HookTiming[] {
    return this.hookTimings;
  }

  get status(): KernelState {
    return this.state;
  }

  private recordTiming(timing: HookTiming): void {
    this.hookTimings.push(timing);
    if (this.hookTimings.length > 1000) this.hookTimings.splice(0, this.hookTimings.length - 1000);
    if (this.logger.isLevelEnabled("debug")) {
      this.logger.debug({ hook: timing.hook, plugin: timing.plugin, ms: Number(timing.durationMs.toFixed(3)), ok: timing.ok }, "hook tap");
    }
  }

  /** @internal */
  installPlugin(candidate: PluginCandidate, pluginConfig: unknown): void {
    const { plugin, origin } = candidate;
    const contributions: PluginContributions = { tools: [], middlewares: [], providers: [], commands: [], hooks: [] };
    const ctx = this.contextFor(plugin, pluginConfig, contributions, origin.where);
    let returned: unknown;
    try {
      returned = plugin.setup(ctx as PluginContext<never>);
    } catch (err) {
      if (err instanceof AntlerError) throw err;
      throw new AntlerError(
        ErrorCodes.PLUGIN_SETUP_FAILED,
        `setup of plugin "${plugin.name}" threw: ${(err as Error)?.message ?? String(err)}`,
        { where: origin.where, cause: err },
      );
    }
    if (returned && typeof (returned as PromiseLike<unknown>).then === "function") {
      throw new AntlerError(ErrorCodes.PLUGIN_SETUP_ASYNC, `setup of plugin "${plugin.name}" returned a promise`, {
        where: origin.where,
        hint: "setup must be synchronous and do no I/O; move async work into ctx.hooks.start.tap(...).",
      });
    }
    this.pluginInfos.push(
      Object.freeze({
        name: plugin.name,
        version: plugin.version,
        description: plugin.description,
        origin,
        dependsOn: plugin.dependsOn ?? [],
        configSchema: plugin.configSchema as z.ZodType | undefined,
        configSections: plugin.configSections ?? {},
        contributions,
      }),
    );
  }

  private contextFor(plugin: AntlerPlugin, config: unknown, contributions: PluginContributions, where: string): PluginContext {
    const name = plugin.name;
    const hooks = this.hooks;
    const tapOn = (hookName: HookName) => ({
      tap: (fn: (...args: never[]) => unknown, options: TapOptions = {}) => {
        const stage = stageNumber(options.stage, `${where} (${name}) hooks.${hookName}`);
        if (!contributions.hooks.includes(hookName)) contributions.hooks.push(hookName);
        const hook = hooks[hookName] as unknown as {
          tap(o: { name: string; stage: number }, f: (...a: unknown[]) => unknown): void;
          tapPromise(o: { name: string; stage: number }, f: (...a: unknown[]) => Promise<unknown>): void;
        };
        if (hookName === "boot") hook.tap({ name, stage }, fn as (...a: unknown[]) => unknown);
        else hook.tapPromise({ name, stage }, async (...args: unknown[]) => (fn as (...a: unknown[]) => unknown)(...args));
      },
    });
    const pluginHooks = Object.freeze(
      Object.fromEntries((Object.keys(hooks) as HookName[]).map((h) => [h, Object.freeze(tapOn(h))])),
    ) as unknown as PluginHooks;
    return Object.freeze({
      plugin: Object.freeze({ name, version: plugin.version }),
      config,
      kernelConfig: this.config,
      paths: this.paths,
      logger: this.logger.child({ plugin: name }),
      hooks: pluginHooks,
      provide: <T>(token: Token<T>, provider: Provider<T>) => {
        this.services.register(token, provider, name);
        contributions.providers.push(token.name);
      },
      services: this.scope,
      tools: Object.freeze({
        add: (tool: ToolProvider, options: ToolContribution = {}) => this.addTool(name, tool, options, contributions, where),
      }),
      models: Object.freeze({
        addProvider: (provider: ModelProvider) => {
          this.providers.add(provider, name, where);
          contributions.providers.push(`model:${provider.id}`);
        },
        create: (model?: string, options?: CreateModelOptions) => this.createModel(model, options),
      }),
      sandbox: Object.freeze({
        addProvider: (provider: SandboxProvider) => {
          this.sandboxProviders.add(provider, name, where);
          contributions.providers.push(`sandbox:${provider.id}`);
        },
        provider: () => this.sandboxProvider(),
      }),
      storage: Object.freeze({
        addBackend: (backend: StorageBackend) => {
          this.storage.add(backend, name, where);
          contributions.providers.push(`storage:${backend.id}`);
        },
        openDatabase: (options?: OpenDatabaseOptions) => this.openDatabase(options),
        openCheckpointer: (options?: OpenCheckpointerOptions) => this.openCheckpointer(options),
      }),
      middleware: Object.freeze({
        add: (middleware: MiddlewareSpec | MiddlewareFactory, placement: MiddlewarePlacement = {}) =>
          this.addMiddleware(name, middleware, placement, contributions),
      }),
      commands: Object.freeze({
        add: <O extends Record<string, CliOptionSpec> = never>(command: CliCommand<O>) => {
          const words = command.name.trim().split(/\s+/).join(" ");
          const clash = this.commandList.find((c) => c.name === words);
          if (clash) {
            throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `CLI command "${words}" is already provided by ${clash.plugin}`, {
              where,
            });
          }
          const problem = declarationProblem(command as never);
          if (problem) throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `CLI command "${words}": ${problem}`, { where });
          this.commandList.push({ ...(command as unknown as CliCommand), name: words, plugin: name });
          contributions.commands.push(words);
        },
      }),
    });
  }

  private addTool(
    plugin: string,
    provider: ToolProvider,
    options: ToolContribution,
    contributions: PluginContributions,
    where: string,
  ): void {
    const source = options.source ?? "plugin";
    const defaultStage = { config: "first", builtin: "early", mcp: "normal", plugin: "normal", acp: "late", subagent: "last" } as const;
    const stage = stageNumber(options.stage ?? defaultStage[source], `${where} (${plugin}) tools.add`);
    if (typeof provider !== "function" && (!provider || typeof provider.name !== "string")) {
      throw new AntlerError(ErrorCodes.TOOL_INVALID, "tools.add needs a LangChain tool or a factory returning one", { where });
    }
    const declared = options.name ?? (provider as { toolName?: string }).toolName;
    contributions.tools.push(typeof provider === "function" ? (declared ?? `${provider.name || "(factory)"}()`) : provider.name);
    this.hooks.assembleTools.tapPromise({ name: plugin, stage }, async (entries, context) => {
      const tool = typeof provider === "function" ? await provider(context) : await builtTool(provider);
      if (!tool) return entries;
      return [...entries, { tool, plugin, source, group: options.group, ...(options.idempotent ? { idempotent: true } : {}) }];
    });
  }

  listModels(): ModelInfo[] {
    return this.config.models.map(modelInfo);
  }

  modelConfig(name?: string): ModelConfig {
    const models = this.config.models;
    const wanted = name ?? this.config.default_model ?? models[0]?.name;
    const found = models.find((m) => m.name === wanted);
    if (!found) {
      throw new AntlerError(
        ErrorCodes.MODEL_NOT_FOUND,
        wanted === undefined ? "no models are configured" : `model "${wanted}" is not configured`,
        {
          where: "models",
          hint: models.length
            ? `Configured models: ${models.map((m) => m.name).join(", ")}.`
            : "Add an entry under `models:` in config.yaml (provider: openai | anthropic | cassette | ...).",
        },
      );
    }
    return found;
  }

  sandboxProvider(): SandboxProvider {
    const wanted = this.config.sandbox.provider;
    const ids = this.sandboxProviders.ids;
    const entry = this.sandboxProviders.get(wanted ?? (ids.length === 1 ? (ids[0] as string) : ""));
    if (!entry) {
      throw new AntlerError(
        ErrorCodes.SANDBOX_PROVIDER_NOT_FOUND,
        wanted === undefined
          ? ids.length === 0
            ? "no sandbox provider is installed"
            : `several sandbox providers are installed (${ids.join(", ")}) and sandbox.provider does not pick one`
          : `sandbox provider "${wanted}" is not installed`,
        {
          where: "sandbox.provider",
          hint: ids.length
            ? `Installed providers: ${ids.join(", ")}. Set sandbox.provider to one of them.`
            : "Enable a provider plugin in config.yaml, e.g. @antler/sandbox-local.",
        },
      );
    }
    return entry;
  }

  openDatabase(options?: OpenDatabaseOptions): Promise<AntlerDatabase> {
    return this.storage.openDatabase(options);
  }

  openCheckpointer(options?: OpenCheckpointerOptions): Promise<Checkpointer> {
    return this.storage.openCheckpointer(options);
  }

  configJsonSchema(): Record<string, unknown> {
    return composedConfigJsonSchema(this.pluginInfos);
  }

  /** Each `models:` entry checked by its provider (when registered and it has a `check`), at boot. */
  checkModelEntries(): void {
    for (const [i, config] of this.config.models.entries()) this.providers.get(config.provider)?.check?.(config, `models[${i}]`);
  }

  async createModel(name?: string, options: CreateModelOptions = {}): Promise<BaseChatModel> {
    const config = this.modelConfig(name);
    const where = `models[${this.config.models.indexOf(config)}]`;
    const provider = this.providers.get(config.provider);
    if (!provider) {
      const known = this.providers.ids;
      throw new AntlerError(
        ErrorCodes.MODEL_PROVIDER_NOT_FOUND,
        `model "${config.name}" uses provider "${config.provider}", which no plugin registered`,
        {
          where: `${where}.provider`,
          hint: known.length
            ? `Registered providers: ${known.join(", ")}. Enable the plugin for "${config.provider}" (e.g. @antler/plugin-${config.provider}).`
            : `Enable the plugin that provides it (e.g. @antler/plugin-${config.provider}) in config.yaml \`plugins:\`.`,
        },
      );
    }
    const logger = this.logger.child({ model: config.name });
    if (options.thinking && !config.supports_thinking) logger.warn(`thinking is off: ${where} does not declare supports_thinking`);
    // With Antler's retries or fallbacks, the SDK's own retries (unseen, unrecorded, minutes of backoff) are off unless set.
    const planned = (config.retry || config.fallbacks?.length) && config.max_retries === undefined ? { ...config, max_retries: 0 } : config;
    const entry = options.thinking === undefined ? planned : thinkingModelConfig(planned, options.thinking, options.reasoningEffort);
    const model = await provider.create(entry, {
      paths: this.paths,
      logger,
      env: this.env,
      where,
      createModel: (other, otherOptions = options) => this.createModel(other, otherOptions),
    });
    // The plain path stays the provider's own model: nothing wraps it.
    if (!needsCallPlan(config)) return model;
    const plan = this.scope.tryResolve(MODEL_CALL_PLANNER);
    if (!plan) {
      throw new AntlerError(
        ErrorCodes.CONFIG_INVALID,
        `model "${config.name}" sets fallbacks, retry, limits or pricing, and no plugin plans model calls`,
        {
          where,
          hint: "Load @antler/plugin-runtime (the default preset does), or remove those keys.",
        },
      );
    }
    const fallbacks = [];
    for (const name of config.fallbacks ?? []) fallbacks.push({ name, model: await this.createModel(name, options) });
    return plan(model, config, fallbacks, { where, logger });
  }

  private addMiddleware(
    plugin: string,
    middleware: MiddlewareSpec | MiddlewareFactory,
    placement: MiddlewarePlacement,
    contributions: PluginContributions,
  ): void {
    // A default-chain slot keeps its bare name (Title, Clarification); everything else is namespaced by plugin.
    const slot = placement.slot;
    const qualified = slot ?? `${plugin}/${middleware.name}`;
    contributions.middlewares.push(qualified);
    this.hooks.assembleMiddleware.tapPromise({ name: plugin, stage: slot ? STAGES.first : STAGES.normal }, async (entries, context) => {
      const spec =
        "create" in middleware && typeof middleware.create === "function"
          ? await middleware.create(context)
          : (middleware as MiddlewareSpec);
      if (!spec) return entries;
      return [...entries, { name: qualified, plugin, placement, spec }];
    });
  }

  async assembleMiddleware(context: Partial<MiddlewareAssemblyContext> = {}): Promise<MiddlewareEntry[]> {
    const full: MiddlewareAssemblyContext = Object.freeze({
      modelName: context.modelName,
      modelInfo: context.modelInfo,
      model: context.model,
      subagent: context.subagent ?? false,
      context: Object.freeze({ ...(context.context ?? {}) }),
    });
    const entries = await this.hooks.assembleMiddleware.promise([], full);
    return composeChain(
      fillSlots(entries.filter((e) => e.placement.slot !== undefined)),
      entries.filter((e) => e.placement.slot === undefined),
    );
  }

  async start(): Promise<void> {
    if (this.state === "started") return;
    if (this.state !== "booted") {
      throw new AntlerError(ErrorCodes.KERNEL_STATE, `cannot start a kernel that is ${this.state}`, { hint: "Create a new kernel." });
    }
    this.state = "starting";
    await loadAuthoring(); // plugins' run-time helpers (refuseToolCall, endTurn) answer from here on
    for (const tap of this.hooks.start.taps) {
      try {
        await (tap.fn as () => Promise<void>)();
      } catch (err) {
        this.state = "started";
        await this.close().catch((closeErr: unknown) => this.logger.error({ err: closeErr }, "close after failed start also failed"));
        throw new AntlerError(
          ErrorCodes.KERNEL_START_FAILED,
          `plugin "${tap.name}" failed to start: ${(err as Error)?.message ?? String(err)}`,
          { where: tap.name, cause: err },
        );
      }
    }
    this.state = "started";
  }

  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.state = "closing";
    const errors: unknown[] = [];
    const attempt = async (failed: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        errors.push(new AntlerError(ErrorCodes.KERNEL_STOP_FAILED, `${failed}: ${(err as Error)?.message}`, { cause: err }));
      }
    };
    for (const tap of [...this.hooks.stop.taps].reverse()) await attempt(`plugin "${tap.name}" failed to stop`, tap.fn as () => unknown);
    for (const { value: provider, plugin } of this.sandboxProviders.list().reverse()) {
      await attempt(`sandbox provider "${provider.id}" of ${plugin} failed to close`, () => provider.close());
    }
    await this.services.dispose().catch((err: unknown) => errors.push(err));
    this.state = "closed";
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} plugins failed to stop`);
  }

  async run<T>(fn: (run: RunContext) => Promise<T> | T, options: RunOptions = {}): Promise<T> {
    return ensureTraceContext(options.traceId, async (traceId) => {
      const run = await this.beginRun({ ...options, traceId });
      try {
        const result = await Promise.race([Promise.resolve().then(() => fn(run.context)), run.cancelled]);
        await run.end("success");
        return result;
      } catch (err) {
        await run.end(run.context.signal.aborted ? "cancelled" : "error", err);
        throw err;
      }
    });
  }

  async beginRun(options: RunOptions = {}): Promise<ActiveRun> {
    // The id the surrounding scope would bind (inherit, else the carried one, else fresh): a run begun inside a
    // scope must record the id its logs carry, never a carried one that disagrees.
    const traceId = ensureTraceContext(options.traceId, (id) => id);
    const runId = options.runId ?? randomUUID();
    const handle: RunScopeHandle = this.services.createRunScope(runId);
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    const info: RunInfo = Object.freeze({ runId, traceId, threadId: options.threadId, userId: options.userId });
    const context: RunContext = Object.freeze({ ...info, scope: handle.scope, signal: controller.signal });
    const cancelled = new Promise<never>((_, reject) => {
      const fail = () =>
        reject(
          new AntlerError(ErrorCodes.RUN_CANCELLED, `run ${runId} was cancelled`, {
            details: { runId, traceId, reason: String(controller.signal.reason ?? "") },
          }),
        );
      if (controller.signal.aborted) fail();
      else controller.signal.addEventListener("abort", fail, { once: true });
    });
    cancelled.catch(() => {});
    let ended = false;
    const end = async (outcome: RunOutcome, error?: unknown) => {
      if (ended) return;
      ended = true;
      options.signal?.removeEventListener("abort", onAbort);
      try {
        if (outcome === "error")
          await this.hooks.runError.promise(info, error).catch((e: unknown) => this.logger.error({ err: e }, "runError hook failed"));
        await this.hooks.runEnd.promise(info, outcome).catch((e: unknown) => this.logger.error({ err: e }, "runEnd hook failed"));
      } finally {
        await handle.dispose().catch((e: unknown) => this.logger.error({ err: e, runId }, "disposing run scope failed"));
      }
    };
    try {
      await Promise.race([this.hooks.runStart.promise(info), cancelled]);
    } catch (err) {
      await end(controller.signal.aborted ? "cancelled" : "error", err);
      throw err;
    }
    return { context, cancelled, abort: (reason?: unknown) => controller.abort(reason), end };
  }

  async assembleTools(options: GetAvailableToolsOptions = {}): Promise<ToolEntry[]> {
    // A model declared without tool support is offered none: it could not call them, and some servers refuse them.
    const model = options.modelName === undefined ? undefined : this.config.models.find((m) => m.name === options.modelName);
    if (model?.supports_tools === false) return [];
    const context = toolAssemblyContext(options, this.scope);
    await loadAuthoring(); // so a tool factory's defineTool builds at once
    const assembled = await this.hooks.assembleTools.promise([], context);
    const { entries, conflicts } = finalizeToolEntries(assembled, context);
    for (const c of conflicts) {
      this.logger.warn(
        { tool: c.name, kept: c.kept.plugin, dropped: c.dropped.plugin },
        `tool "${c.name}" from ${c.dropped.plugin} (${c.dropped.source}) is shadowed by the one from ${c.kept.plugin} (${c.kept.source}); keeping the first`,
      );
    }
    return entries;
  }

  async getAvailableTools(options: GetAvailableToolsOptions = {}): Promise<AntlerTool[]> {
    return (await this.assembleTools(options)).map((e) => e.tool);
  }
}

/**
 * Boots a kernel: reads and validates config, imports `plugins:` entries, orders plugins by `dependsOn`,
 * validates each plugin's config and runs every `setup`. Nothing is started; call `kernel.start()`.
 */
export async function createKernel(options: CreateKernelOptions = {}): Promise<Kernel> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const document = readDocument(options, cwd, env);
  const bootConfig = validateKernelConfig(document);
  const level = env.ANTLER_LOG_LEVEL ?? bootConfig.logging.level ?? options.defaultLogLevel ?? "info";
  const logger = options.logger ?? createLogger({ level, enhance: bootConfig.logging.enhance, destination: options.logDestination });

  const candidates: PluginCandidate[] = [];
  for (const [j, entry] of (options.plugins ?? []).entries()) {
    const plugin = "setup" in entry ? entry : entry.plugin;
    const rawConfig = "setup" in entry ? undefined : entry.config;
    const label = typeof (plugin as { name?: unknown })?.name === "string" ? plugin.name : `#${j}`;
    const where = `code plugins[${j}] (${label})`;
    assertNoBuiltinName(label, where);
    candidates.push({ plugin: validateManifest(plugin, where), origin: { kind: "code", spec: label, where }, rawConfig });
  }
  const configured = await importConfiguredPlugins(bootConfig.plugins, document.dir);
  for (const c of configured) assertNoBuiltinName(c.plugin.name, c.origin.where);
  candidates.push(...configured);
  if (options.builtins !== false && bootConfig.preset === "default") {
    // The preset goes first, as built-ins did; a plugin also named in code or `plugins:` is loaded from there.
    const named = new Set(candidates.map((c) => c.plugin.name));
    candidates.unshift(...(await importPresetPlugins(bootConfig, document.dir, named)));
  }
  const ordered = orderPlugins(candidates);
  const config = validateKernelConfig(document, pluginSections(ordered));

  const pluginConfigs = validatePluginConfigs(ordered, document);
  const paths: PluginPaths = Object.freeze({
    configDir: document.dir,
    configFile: document.path,
    baseDir: resolve(document.dir, config.base_dir),
  });
  const kernel = new KernelHost(config, paths, logger, env);
  for (const candidate of ordered) kernel.installPlugin(candidate, pluginConfigs.get(candidate));
  kernel.checkModelEntries();
  kernel.hooks.boot.call();
  logger.debug({ plugins: ordered.map((c) => c.plugin.name) }, "kernel booted");
  return kernel;
}

function readDocument(options: CreateKernelOptions, cwd: string, env: Env): ConfigDocument {
  const given = [options.config !== undefined, options.configText !== undefined, options.configPath !== undefined].filter(Boolean).length;
  if (given > 1) throw new AntlerError(ErrorCodes.CONFIG_INVALID, "give only one of config, configText and configPath to createKernel");
  if (options.config !== undefined) return configDocumentFromObject(options.config as Record<string, unknown>, cwd);
  if (options.configText !== undefined) return parseConfigText(options.configText, { env, dir: cwd });
  const path =
    options.configPath !== undefined || options.discover !== false ? discoverConfigPath({ explicit: options.configPath, env, cwd }) : null;
  return path ? readConfigDocument(path, env) : configDocumentFromObject({}, cwd);
}

function validatePluginConfigs(ordered: readonly PluginCandidate[], document: ConfigDocument): Map<PluginCandidate, unknown> {
  const values = new Map<PluginCandidate, unknown>();
  const issues: ConfigIssue[] = [];
  for (const candidate of ordered) {
    const schema = candidate.plugin.configSchema as z.ZodType | undefined;
    const prefix: PathSegment[] =
      candidate.entryIndex !== undefined ? ["plugins", candidate.entryIndex, "config"] : ["plugins", candidate.plugin.name, "config"];
    if (!schema) {
      if (candidate.rawConfig !== undefined && candidate.rawConfig !== null) {
        issues.push({
          path: formatPath(prefix),
          segments: prefix,
          message: `plugin "${candidate.plugin.name}" takes no config`,
          ...locate(document.source, prefix),
        });
      }
      continue;
    }
    const raw = candidate.rawConfig ?? {};
    // Code plugins have no YAML node to point at; only config entries get line:column.
    const located = candidate.entryIndex !== undefined ? document : configDocumentFromObject({}, document.dir);
    const result = validateSection(schema, raw, located, prefix);
    if (!result.ok) issues.push(...result.issues);
    for (const unknown of findUnknownKeys(schema, raw)) {
      const segments = [...prefix, ...unknown.segments, unknown.key];
      issues.push({
        path: formatPath(segments),
        segments,
        message: `unknown key "${unknown.key}" for plugin "${candidate.plugin.name}"${unknown.known.length ? `; allowed here: ${unknown.known.join(", ")}` : ""}`,
        suggestion: unknown.suggestion,
        ...locate(located.source, [...prefix, ...unknown.segments], unknown.key),
      });
    }
    if (!result.ok) continue;
    values.set(candidate, result.value);
  }
  if (issues.length > 0) throw invalidConfig(issues, document.path);
  return values;
}

/**
 * The default-chain entries in slot order. A slot filled twice keeps the later filler only if it says
 * `override: true`; otherwise two plugins would silently fight over it.
 */
function fillSlots(filled: readonly MiddlewareEntry[]): MiddlewareEntry[] {
  const bySlot = new Map<string, MiddlewareEntry>();
  for (const entry of filled) {
    const existing = bySlot.get(entry.name);
    if (existing && entry.placement.override !== true) {
      throw new AntlerError(ErrorCodes.PIPELINE_INVALID, `slot "${entry.name}" is filled by ${existing.plugin} and by ${entry.plugin}`, {
        where: entry.plugin,
        hint: `Add \`override: true\` to the placement of the one that should win, or switch the other plugin off.`,
      });
    }
    bySlot.set(entry.name, entry);
  }
  return DEFAULT_CHAIN.flatMap((slot) => bySlot.get(slot) ?? []);
}

/** The top-level sections the plugins own; a section claimed twice, or a kernel key, is an error naming both. */
function pluginSections(ordered: readonly PluginCandidate[]): Record<string, z.ZodType> {
  const sections: Record<string, z.ZodType> = {};
  const owners = new Map<string, string>();
  for (const { plugin, origin } of ordered) {
    for (const [key, schema] of Object.entries(plugin.configSections ?? {})) {
      const owner = key in kernelConfigSchema.shape ? "the kernel" : owners.get(key);
      if (owner) {
        throw new AntlerError(
          ErrorCodes.PLUGIN_INVALID_MANIFEST,
          `config section "${key}" of ${plugin.name} is already owned by ${owner}`,
          {
            where: origin.where,
            hint: "Each top-level key of config.yaml has one owner; rename the section or keep it under plugins[i].config.",
          },
        );
      }
      owners.set(key, plugin.name);
      sections[key] = schema;
    }
  }
  return sections;
}

/** Names under `@antler/kernel/` are the kernel's own. */
function assertNoBuiltinName(name: string, where: string): void {
  if (name.startsWith(`${KERNEL_OWNER}/`)) {
    throw new AntlerError(ErrorCodes.PLUGIN_INVALID_MANIFEST, `plugin name "${name}" is reserved for the kernel`, { where });
  }
}
