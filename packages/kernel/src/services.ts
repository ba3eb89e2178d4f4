import { createRequire } from "node:module";
import type { DependencyContainer } from "tsyringe";
import { kernelCopies, type Lifetime, type Provider, type Scope, type Token } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";

interface Registration {
  token: Token<unknown>;
  provider: Provider<unknown>;
  owner: string;
}

type Tsyringe = typeof import("tsyringe");
let tsyringe: Tsyringe | undefined;

/**
 * tsyringe, required (after reflect-metadata, which it needs) the first time a scope builds a service: booting a
 * kernel to check config or list plugins registers services but builds none, so it never loads it.
 */
function loadTsyringe(): Tsyringe {
  if (!tsyringe) {
    const require = createRequire(import.meta.url);
    require("reflect-metadata");
    tsyringe = require("tsyringe") as Tsyringe;
  }
  return tsyringe;
}
/** A value with `[Symbol.asyncDispose]()`, `dispose()` or `close()` is disposed when its scope ends, newest first. */
async function disposeValue(value: unknown): Promise<void> {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return;
  const v = value as Partial<Record<string | symbol, unknown>>;
  const asyncDispose = (Symbol as { asyncDispose?: symbol }).asyncDispose;
  if (asyncDispose && typeof v[asyncDispose] === "function") return void (await (v[asyncDispose] as () => unknown)());
  if (typeof v.dispose === "function") return void (await (v.dispose as () => unknown)());
  if (typeof v.close === "function") return void (await (v.close as () => unknown)());
}

/** Disposes every value, newest first, even after a failure; resolves to the failures. */
async function disposeAll(values: unknown[]): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (const value of values.reverse()) await disposeValue(value).catch((err: unknown) => errors.push(err));
  return errors;
}

/**
 * The registry behind a kernel: who registered which token, and a tsyringe container that builds and caches the
 * values. The kernel's root scope is a child container of its own (never tsyringe's global one), each run a child
 * of that. Every injection goes through an explicit token (its symbol is the tsyringe token), so no decorator
 * metadata is relied on beyond `inject(token)`. Plugins only see `Scope` and the registration methods.
 */
export class ServiceRegistry {
  private readonly registrations = new Map<symbol, Registration>();
  private readonly built: unknown[] = []; // factory- or class-built singletons, in the order they were built
  private readonly scopes = new WeakMap<DependencyContainer, KernelScope>();
  private readonly root = new KernelScope(this, "root", null);
  private rootContainer: DependencyContainer | undefined;
  private runCounter = 0;

  register<T>(token: Token<T>, provider: Provider<T>, owner: string): void {
    const existing = this.registrations.get(token.key);
    if (existing) {
      throw new AntlerError(ErrorCodes.DI_DUPLICATE, `token "${token.name}" is already provided by ${existing.owner}`, {
        where: owner,
        hint: "Each token has one provider. Resolve the existing one instead, or use a different token.",
      });
    }
    const hasValue = Object.hasOwn(provider, "useValue");
    if ([hasValue, provider.useFactory !== undefined, provider.useClass !== undefined].filter(Boolean).length !== 1) {
      throw new AntlerError(ErrorCodes.DI_DUPLICATE, `provider for "${token.name}" needs exactly one of useValue, useFactory or useClass`, {
        where: owner,
      });
    }
    const lifetime = provider.lifetime ?? "singleton";
    if (hasValue && lifetime !== "singleton") {
      throw new AntlerError(ErrorCodes.DI_DUPLICATE, `useValue for "${token.name}" cannot have lifetime "${lifetime}"`, {
        where: owner,
        hint: "Use useFactory or useClass for run-scoped or transient services.",
      });
    }
    const registration: Registration = { token: token as Token<unknown>, provider: provider as Provider<unknown>, owner };
    this.registrations.set(token.key, registration);
    if (this.rootContainer) this.bind(this.rootContainer, registration);
  }

  ownerOf(token: Token<unknown>): string | undefined {
    return this.registrations.get(token.key)?.owner;
  }

  /** Every registered token with its owner, in registration order. */
  listTokens(): Array<{ token: string; owner: string; lifetime: Lifetime }> {
    return [...this.registrations.values()].map((r) => ({
      token: r.token.name,
      owner: r.owner,
      lifetime: r.provider.lifetime ?? "singleton",
    }));
  }

  rootScope(): Scope {
    return this.root;
  }

  createRunScope(runId?: string): RunScopeHandle {
    this.runCounter += 1;
    const id = runId ?? `run-${this.runCounter}`;
    const tracked: unknown[] = [];
    const scope = new KernelScope(this, id, tracked);
    let disposed = false;
    return {
      scope,
      get disposed() {
        return disposed;
      },
      dispose: async () => {
        if (disposed) return;
        disposed = true;
        scope.markDisposed();
        const errors = await disposeAll(tracked);
        if (errors.length === 1) throw errors[0];
        if (errors.length > 1) throw new AggregateError(errors, `disposing run scope ${id} failed ${errors.length} times`);
      },
    };
  }

  /** Disposes singletons built by factories or classes, newest first. */
  async dispose(): Promise<void> {
    const errors = await disposeAll(this.built.splice(0));
    if (errors.length > 0) throw new AggregateError(errors, "disposing kernel services failed");
  }

  /** @internal The scope's container: the root's, or a run's child of it, made when first needed. */
  containerOf(scope: KernelScope): DependencyContainer {
    if (!this.rootContainer) {
      this.rootContainer = loadTsyringe().container.createChildContainer();
      this.scopes.set(this.rootContainer, this.root);
      for (const registration of this.registrations.values()) this.bind(this.rootContainer, registration);
    }
    if (scope === this.root) return this.rootContainer;
    const child = this.rootContainer.createChildContainer();
    this.scopes.set(child, scope);
    return child;
  }

  /** @internal */
  resolveIn<T>(scope: KernelScope, token: Token<T>): T {
    const reg = this.registrations.get(token.key);
    if (!reg) throw this.unregistered(token);
    if (Object.hasOwn(reg.provider, "useValue")) return reg.provider.useValue as T;
    return scope.container().resolve<T>(token.key);
  }

  /** Registers one provider with tsyringe: the lifetime picks the caching (per kernel, per run container, none). */
  private bind(container: DependencyContainer, { token, provider, owner }: Registration): void {
    if (Object.hasOwn(provider, "useValue")) return void container.register(token.key, { useValue: provider.useValue });
    const { instanceCachingFactory, instancePerContainerCachingFactory } = loadTsyringe();
    const build = (c: DependencyContainer, into: unknown[] | null): unknown => {
      const value = provider.useFactory ? provider.useFactory(this.scopes.get(c) ?? this.root) : construct(c, token, provider, owner);
      into?.push(value);
      return value;
    };
    const runScoped = (c: DependencyContainer) => {
      const tracked = this.scopes.get(c)?.tracked;
      if (tracked) return build(c, tracked);
      throw new AntlerError(ErrorCodes.DI_UNREGISTERED, `token "${token.name}" is run-scoped and was resolved outside a run`, {
        where: owner,
        hint: "Resolve it from the run scope (kernel.run(...) or a tool's run context), not from the root scope.",
      });
    };
    const lifetime = provider.lifetime ?? "singleton";
    const useFactory =
      lifetime === "transient"
        ? (c: DependencyContainer) => build(c, null)
        : lifetime === "singleton"
          ? instanceCachingFactory(() => build(this.rootContainer as DependencyContainer, this.built))
          : instancePerContainerCachingFactory(runScoped);
    container.register(token.key, { useFactory });
  }

  private unregistered(token: Token<unknown>): AntlerError {
    const known = [...this.registrations.values()];
    const listing = known.length ? known.map((r) => `"${r.token.name}" (${r.owner})`).join(", ") : "none: no plugin registered a token";
    // A registered token of the same name that does not match was made by another copy of the kernel, or by hand.
    const twin = known.find((r) => r.token.name === token.name);
    const copies = kernelCopies();
    const message = [
      `no provider for token "${token.name}". Registered tokens: ${listing}.`,
      twin ? `A different token object named "${token.name}" is registered by ${twin.owner}.` : "",
      copies.length > 1 ? `${copies.length} copies of @antler/kernel are loaded: ${copies.join(", ")}.` : "",
    ];
    return new AntlerError(ErrorCodes.DI_UNREGISTERED, message.filter(Boolean).join(" "), {
      hint:
        copies.length > 1
          ? "Load one copy of @antler/kernel: make it a peerDependency of each plugin (not a dependency) and reinstall so it is deduped."
          : "Enable the plugin that provides it in config.yaml `plugins:` and list it in your plugin's `dependsOn`; in a plugin's setup, only tokens of plugins set up earlier resolve (resolve later ones in hooks.start).",
      details: { token_name: token.name, registered: known.map((r) => ({ token_name: r.token.name, plugin: r.owner })) },
    });
  }
}

/** A `useClass` provider's instance, built by tsyringe in `container`; its decorator mistakes say how to fix them. */
function construct(container: DependencyContainer, token: Token<unknown>, provider: Provider<unknown>, owner: string): unknown {
  try {
    return container.resolve(provider.useClass as new () => unknown);
  } catch (err) {
    if (err instanceof AntlerError || !/^(Cannot inject|TypeInfo not known)/.test(String((err as Error)?.message))) throw err;
    const what = `building ${provider.useClass?.name || "a class"} for "${token.name}" failed: ${(err as Error).message}`;
    throw new AntlerError(ErrorCodes.DI_UNREGISTERED, what, {
      where: owner,
      hint: "Decorate the class with injectable() and every constructor parameter with inject(TOKEN), both from @antler/kernel/di, and provide each token it injects (a singleton cannot inject a run-scoped one).",
    });
  }
}

export interface RunScopeHandle {
  readonly scope: Scope;
  readonly disposed: boolean;
  dispose(): Promise<void>;
}

class KernelScope implements Scope {
  private isDisposed = false;
  private own: DependencyContainer | undefined;
  constructor(
    private readonly registry: ServiceRegistry,
    readonly id: string,
    /** What a run scope built, to dispose when the run ends; null for the root scope. */
    readonly tracked: unknown[] | null,
  ) {}

  markDisposed(): void {
    this.isDisposed = true;
  }

  container(): DependencyContainer {
    this.own ??= this.registry.containerOf(this);
    return this.own;
  }

  resolve<T>(token: Token<T>): T {
    if (this.isDisposed) {
      throw new AntlerError(ErrorCodes.DI_SCOPE_DISPOSED, `scope "${this.id}" was disposed; cannot resolve "${token.name}"`, {
        hint: "Do not keep a run scope past the end of its run.",
      });
    }
    return this.registry.resolveIn(this, token);
  }

  tryResolve<T>(token: Token<T>): T | undefined {
    return this.has(token) ? this.resolve(token) : undefined;
  }

  has(token: Token<unknown>): boolean {
    return this.registry.ownerOf(token) !== undefined;
  }
}
