import type { Token } from "@antler/kernel";
import type { AntlerClient, AntlerClientOptions } from "./client/client.js";

/**
 * What a process that executes runs without serving them (`antler worker`) needs from the plugin that does serve
 * them (the gateway): the same run options (leases, limits, attempts) and the same observers (the run event log),
 * so a run it takes over streams on to clients following it through any gateway. Provided under `RUN_HOSTING_TOKEN`.
 */
export interface RunHosting {
  readonly clientOptions: Pick<AntlerClientOptions, "runLeases" | "maxActiveRuns" | "maxAttempts">;
  /** Attaches the observers every executing client needs; resolves with the function that detaches (and closes) them. */
  attach(client: AntlerClient): Promise<() => Promise<void>>;
}

/** A registry symbol, so a provider needs no import of this package (and duplicate copies agree). */
export const RUN_HOSTING_TOKEN: Token<RunHosting> = Object.freeze({
  key: Symbol.for("@antler/plugin-runtime/run-hosting"),
  name: "plugin-runtime.run-hosting",
});
