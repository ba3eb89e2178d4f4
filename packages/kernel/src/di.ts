// The DI contract plugins use: tokens, providers and scopes. The registry behind it is in `services.ts`, loaded
// with the kernel host; the container behind that is tsyringe, loaded on first use.
import { fileURLToPath } from "node:url";

/** A typed DI key. Create one per service with `createToken<T>("package.service")`. */
export interface Token<T> {
  readonly key: symbol;
  readonly name: string;
  /** Phantom field that carries `T`; never set at run time. */
  readonly __type?: T;
}

/**
 * Keyed by name in the runtime's symbol registry (`Symbol.for`), so that two copies of the kernel in one
 * process (a plugin that brought its own) agree on every token. One name is one token.
 */
export function createToken<T>(name: string): Token<T> {
  if (typeof name !== "string" || name.trim() === "") throw new TypeError("createToken needs a non-empty name");
  kernelCopies();
  return Object.freeze({ key: Symbol.for(`antler.token:${name}`), name });
}

/**
 * A value shared by every copy of the kernel in the process, kept on `globalThis` under a registry symbol. The
 * kernel keeps two: the trace AsyncLocalStorage and the list of its own copies.
 */
export function processWide<T>(name: string, create: () => T): T {
  const global = globalThis as Record<symbol, T | undefined>;
  global[Symbol.for(name)] ??= create();
  return global[Symbol.for(name)] as T;
}

/** The folders of every copy of `@antler/kernel` that created a token in this process; more than one is a packaging mistake. */
export function kernelCopies(): string[] {
  const copies = processWide("antler.kernel.copies", () => new Set<string>());
  const file = fileURLToPath(import.meta.url).replaceAll("\\", "/"); // …/kernel/src/di.ts, or dist/ (bundled or not)
  copies.add(file.slice(0, Math.max(file.lastIndexOf("/dist/"), file.lastIndexOf("/src/")) + 1));
  return [...copies];
}

export type Lifetime = "singleton" | "run" | "transient";

export interface Provider<T> {
  /** A value bound as-is. */
  useValue?: T;
  /** Called to build the value; `scope` is the scope that resolves it (the run scope for `run` lifetime). */
  useFactory?: (scope: Scope) => T;
  /**
   * A class tsyringe constructs, with `injectable()` and an `inject(token)` on every constructor parameter (both from
   * `@antler/kernel/di`); parameters resolve in the scope that builds it.
   */
  useClass?: new (
    ...args: never[]
  ) => T;
  /** `singleton` (default): one per kernel. `run`: one per run scope, disposed with it. `transient`: every resolve. */
  lifetime?: Lifetime;
}

export interface Scope {
  readonly id: string;
  resolve<T>(token: Token<T>): T;
  tryResolve<T>(token: Token<T>): T | undefined;
  has(token: Token<unknown>): boolean;
}
