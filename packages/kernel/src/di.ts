// The DI contract plugins use: tokens, providers and scopes. The registry behind it (tsyringe) is in
// `services.ts`, loaded with the kernel host, so that importing the kernel does not load tsyringe.

/** A typed DI key. Create one per service with `createToken<T>("package.service")`. */
export interface Token<T> {
  readonly key: symbol;
  readonly name: string;
  /** Phantom field that carries `T`; never set at run time. */
  readonly __type?: T;
}

export function createToken<T>(name: string): Token<T> {
  if (typeof name !== "string" || name.trim() === "") throw new TypeError("createToken needs a non-empty name");
  return Object.freeze({ key: Symbol(name), name });
}

export type Lifetime = "singleton" | "run" | "transient";

export interface Provider<T> {
  /** A value bound as-is. */
  useValue?: T;
  /** Called to build the value; `scope` is the scope that resolves it (the run scope for `run` lifetime). */
  useFactory?: (scope: Scope) => T;
  /** `singleton` (default): one per kernel. `run`: one per run scope, disposed with it. `transient`: every resolve. */
  lifetime?: Lifetime;
}

export interface Scope {
  readonly id: string;
  resolve<T>(token: Token<T>): T;
  tryResolve<T>(token: Token<T>): T | undefined;
  has(token: Token<unknown>): boolean;
}
