/**
 * Types for the middleware pipeline that the `assembleMiddleware` hook carries. The pipeline itself
 * (placement, fusion of node-style hooks) builds on these.
 */
export interface MiddlewarePlacement {
  /** Place directly before the middleware with this (namespaced or built-in) name. */
  before?: string;
  /** Place directly after the middleware with this name. */
  after?: string;
  /** Replace the middleware with this name; only honoured together with `override: true`. */
  replace?: string;
  override?: boolean;
}

export interface MiddlewareEntry {
  /** Fully qualified name: `<plugin>/<name>` for plugin middleware, bare for kernel built-ins. */
  readonly name: string;
  readonly plugin: string;
  readonly placement: MiddlewarePlacement;
  /** The middleware definition; its shape belongs to the pipeline. */
  readonly spec: object;
}

export interface MiddlewareAssemblyContext {
  readonly modelName: string | undefined;
  readonly subagent: boolean;
  readonly context: Readonly<Record<string, unknown>>;
}
