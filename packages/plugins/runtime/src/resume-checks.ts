import type { PluginContext, Token } from "@antler/kernel";
import type { PausedInterrupt } from "./stores/runs.js";

/** A resume of a paused run, as checks see it before anything runs. */
export interface RunResumeRequest {
  readonly userId: string;
  readonly threadId: string;
  readonly runId: string;
  readonly traceId: string;
  /** What the run waits on; `value.kind` names whose it is (`approval`). */
  readonly interrupt: PausedInterrupt;
  /** What the caller sent (the decision). */
  readonly resume: unknown;
}

/**
 * Vets a resume before the run continues: returns the value to resume the graph with (normalised), `undefined` to
 * leave it to the next check (an interrupt of another kind), or throws a coded `AntlerError` to refuse it, in which
 * case the run stays paused. One check per plugin, asked in plugin load order; the first that answers decides.
 */
export type RunResumeCheck = (request: RunResumeRequest) => unknown | Promise<unknown>;

function resumeCheckToken(pluginName: string): Token<RunResumeCheck> {
  return Object.freeze({
    key: Symbol.for(`@antler/plugin-runtime/run-resume-check:${pluginName}`),
    name: `plugin-runtime.run-resume-check:${pluginName}`,
  });
}

/** Contributes the check resumes of this plugin's interrupts pass (`AntlerClient.resume`, the gateway's resume route). */
export function provideRunResumeCheck(ctx: Pick<PluginContext<unknown>, "provide" | "plugin">, check: RunResumeCheck): void {
  ctx.provide(resumeCheckToken(ctx.plugin.name), { useValue: check });
}

/** The resume value the first answering check returns; with no check answering, what the caller sent. */
export async function vetResume(
  kernel: { readonly plugins: readonly { readonly name: string }[]; readonly scope: { tryResolve<T>(token: Token<T>): T | undefined } },
  request: RunResumeRequest,
): Promise<unknown> {
  for (const plugin of kernel.plugins) {
    const check = kernel.scope.tryResolve(resumeCheckToken(plugin.name));
    if (!check) continue;
    const answer = await check(request);
    if (answer !== undefined) return answer;
  }
  return request.resume;
}
