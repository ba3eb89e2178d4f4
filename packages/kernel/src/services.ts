import { kernelCopies, type Lifetime, type Provider, type Scope, type Token } from "./di.js";
import { AntlerError, ErrorCodes } from "./errors.js";

interface Registration {
  token: Token<unknown>;
  provider: Provider<unknown>;
  owner: string;
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

/** The values one scope holds, by token key: the kernel's singletons, or one run's run-scoped services. */
type Values = Map<symbol, unknown>;

/**
 * The registry behind a kernel: who registered which token, and the values built so far. Every injection goes
 * through an explicit token, so a map per scope is the whole container (no decorator metadata, no global
 * container). Plugins only ever see `Scope` and the registration methods on their setup context.
 */
export class ServiceRegistry {
  private readonly registrations = new Map<symbol, Registration>();
  private readonly values: Values = new Map(); // factory-built singletons, in the order they were built
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
    if (hasValue === (provider.useFactory !== undefined)) {
      throw new AntlerError(ErrorCodes.DI_DUPLICATE, `provider for "${token.name}" needs exactly one of useValue or useFactory`, {
        where: owner,
      });
    }
    const lifetime = provider.lifetime ?? "singleton";
    if (hasValue && lifetime !== "singleton") {
      throw new AntlerError(ErrorCodes.DI_DUPLICATE, `useValue for "${token.name}" cannot have lifetime "${lifetime}"`, {
        where: owner,
        hint: "Use useFactory for run-scoped or transient services.",
      });
    }
    this.registrations.set(token.key, { token: token as Token<unknown>, provider: provider as Provider<unknown>, owner });
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
    return new KernelScope(this, this.values, "root", null);
  }

  createRunScope(runId?: string): RunScopeHandle {
    this.runCounter += 1;
    const id = runId ?? `run-${this.runCounter}`;
    const tracked: unknown[] = [];
    const scope = new KernelScope(this, new Map(), id, tracked);
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

  /** Disposes singletons built by factories, newest first. */
  async dispose(): Promise<void> {
    const errors = await disposeAll([...this.values.values()]);
    this.values.clear();
    if (errors.length > 0) throw new AggregateError(errors, "disposing kernel services failed");
  }

  /** @internal */
  resolveIn<T>(scope: KernelScope, token: Token<T>): T {
    const reg = this.registrations.get(token.key);
    if (!reg) throw this.unregistered(token);
    const { provider } = reg;
    if (Object.hasOwn(provider, "useValue")) return provider.useValue as T;
    const factory = provider.useFactory as (s: Scope) => T;
    switch (provider.lifetime ?? "singleton") {
      case "transient":
        return factory(scope);
      case "singleton": {
        if (!this.values.has(token.key)) {
          const value = factory(this.rootScope());
          this.values.set(token.key, value);
        }
        return this.values.get(token.key) as T;
      }
      case "run": {
        const run = scope.runContainer();
        if (!run) {
          throw new AntlerError(ErrorCodes.DI_UNREGISTERED, `token "${token.name}" is run-scoped and was resolved outside a run`, {
            where: reg.owner,
            hint: "Resolve it from the run scope (kernel.run(...) or a tool's run context), not from the root scope.",
          });
        }
        if (!run.values.has(token.key)) {
          const value = factory(scope);
          run.values.set(token.key, value);
          run.tracked.push(value);
        }
        return run.values.get(token.key) as T;
      }
    }
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

export interface RunScopeHandle {
  readonly scope: Scope;
  readonly disposed: boolean;
  dispose(): Promise<void>;
}

class KernelScope implements Scope {
  private isDisposed = false;
  constructor(
    private readonly registry: ServiceRegistry,
    private readonly values: Values,
    readonly id: string,
    private readonly tracked: unknown[] | null,
  ) {}

  markDisposed(): void {
    this.isDisposed = true;
  }

  runContainer(): { values: Values; tracked: unknown[] } | null {
    return this.tracked ? { values: this.values, tracked: this.tracked } : null;
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
