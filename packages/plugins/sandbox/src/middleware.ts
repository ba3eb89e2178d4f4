import type { Logger, MiddlewareFactory, MiddlewareSpec, ToolCallRequestOf } from "@antler/kernel";
import { ToolMessage } from "@langchain/core/messages";
import { Command, isCommand, Overwrite } from "@langchain/langgraph";
import { BASH_TOOL_NAME, hostBashRefusalText } from "./bash-tool.js";
import {
  denialClarification,
  drainAndDeny,
  EGRESS_REQUEST_KEY,
  type EgressRequest,
  egressOf,
  egressRequestField,
  isApproval,
} from "./egress.js";
import { SANDBOX_MIDDLEWARE_NAME } from "./names.js";
import { READ_STAMPS_KEY, readStampsField } from "./read-stamps.js";
import { acquireError, type SandboxLease, type SandboxRegistry } from "./registry.js";
import { errorText, scopeOf } from "./tool-session.js";

export { SANDBOX_MIDDLEWARE_NAME };

/** The tools that run against the thread's sandbox; a call to any of them acquires it. */
export const SANDBOX_TOOL_NAMES: ReadonlySet<string> = new Set(["bash", "ls", "glob", "grep", "read_file", "write_file", "str_replace"]);

export interface SandboxMiddlewareOptions {
  registry: SandboxRegistry;
  /** Whether `bash` may run (isolated provider or `sandbox.allow_host_bash`). */
  hostBashAllowed(): boolean;
  providerId(): string | undefined;
  logger?: Logger;
}

function errorMessage(request: ToolCallRequestOf, text: string): ToolMessage {
  const name = request.toolCall.name;
  return new ToolMessage({ content: `Error: ${text}`, name, tool_call_id: request.toolCall.id ?? "", status: "error" });
}

/** Adds `extra` state writes to a tool's result, keeping its message, routing and other writes. */
export function withStateUpdate(result: ToolMessage | Command, extra: ReadonlyArray<[string, unknown]>): Command {
  if (!isCommand(result)) return new Command({ update: [["messages", [result]], ...extra] });
  const update = result.update;
  const tuples: [string, unknown][] = Array.isArray(update)
    ? [...(update as [string, unknown][])]
    : Object.entries((update ?? {}) as Record<string, unknown>);
  return new Command({
    update: [...tuples, ...extra],
    ...(result.goto !== undefined ? { goto: result.goto } : {}),
    ...(result.graph !== undefined ? { graph: result.graph } : {}),
  });
}

/**
 * The spec for one agent build. Acquisition is lazy and happens in `wrapToolCall`: only a call to a sandbox
 * tool acquires the thread's sandbox (so a turn that only talks never starts a container or a VM), and that
 * call's result records `{ sandbox_id }` in state. `afterAgent` hands it back. A subagent borrows its parent's
 * thread sandbox and leaves the release to the parent, so its spec has no `afterAgent`.
 */
export function createSandboxMiddlewareSpec(
  options: SandboxMiddlewareOptions,
  build: { subagent: boolean } = { subagent: false },
): MiddlewareSpec {
  const { registry } = options;
  const spec: MiddlewareSpec = {
    name: SANDBOX_MIDDLEWARE_NAME,
    state: { [READ_STAMPS_KEY]: readStampsField, [EGRESS_REQUEST_KEY]: egressRequestField },
    async wrapToolCall(request, handler) {
      const name = request.toolCall.name;
      // `bash` is left out of the agent when host bash is off; a model that calls it anyway gets the reason.
      if (name === BASH_TOOL_NAME && request.tool === undefined && !options.hostBashAllowed()) {
        return errorMessage(request, hostBashRefusalText(options.providerId()));
      }
      if (!SANDBOX_TOOL_NAMES.has(name) || request.tool === undefined) return handler(request);
      const scope = scopeOf(request.runtime);
      if (!scope) return handler(request);
      let lease: SandboxLease;
      try {
        lease = await registry.acquire(scope, request.runtime.signal);
      } catch (err) {
        // This middleware sits outside ToolErrorHandling; a throw here would end the run instead of the call.
        return errorMessage(request, errorText(acquireError(err)));
      }
      let result = await handler(request);
      // Egress denials of a restricted sandbox: interactive runs surface the oldest unsurfaced one as a
      // clarification (beforeModel ends the turn with it); runs that cannot ask drain them and deny.
      const egress = egressOf(lease.sandbox);
      if (egress) {
        const context = request.runtime.context as { non_interactive?: unknown } | undefined;
        if (build.subagent || context?.non_interactive === true) {
          await drainAndDeny(egress, options.logger, build.subagent ? "subagent run" : "non-interactive run");
        } else {
          const denial = await egress.claimOldestDenial().catch((err: unknown) => {
            options.logger?.warn({ err }, "could not read the sandbox's egress denials");
            return undefined;
          });
          if (denial) {
            const ask: EgressRequest = {
              status: "pending",
              host: denial.host,
              port: denial.port,
              reason: denial.reason,
              denial_id: denial.id,
              tool_call_id: request.toolCall.id ?? "",
            };
            result = withStateUpdate(result, [[EGRESS_REQUEST_KEY, ask]]);
          }
        }
      }
      const sandboxId = lease.sandbox.id;
      const recorded = (request.state.sandbox as { sandbox_id?: string } | undefined)?.sandbox_id;
      // One call per lease and graph writes the id: parallel calls of a step all see the state from before the
      // step. A subagent's graph (its own checkpoint thread) shares the lease and records in its own state.
      const graph = String(request.runtime.configurable?.thread_id ?? "");
      if (recorded === sandboxId || lease.recordedIn.has(graph)) return result;
      lease.recordedIn.add(graph);
      if (recorded === undefined) return withStateUpdate(result, [["sandbox", { sandbox_id: sandboxId }]]);
      // The thread's old sandbox is gone (the provider changed, or it expired and was replaced). The reducer
      // refuses a silent swap of ids, so this deliberate one bypasses it; only one Overwrite per step is allowed,
      // which `recordedIn` guarantees.
      options.logger?.warn({ previous: recorded, sandbox_id: sandboxId, thread_id: scope.threadId }, "thread moved to a new sandbox");
      return withStateUpdate(result, [["sandbox", new Overwrite({ sandbox_id: sandboxId })]]);
    },
  };
  if (build.subagent) return spec;
  return {
    ...spec,
    // A denial claimed after a tool call ends the turn as a clarification; the model does not run again first.
    beforeModel: {
      canJumpTo: ["end"],
      hook: (state) => {
        const ask = (state as Record<string, unknown>)[EGRESS_REQUEST_KEY] as EgressRequest | null | undefined;
        if (ask?.status !== "pending") return undefined;
        return { messages: denialClarification(ask), [EGRESS_REQUEST_KEY]: { ...ask, status: "asked" }, jumpTo: "end" } as never;
      },
    },
    // The user's answer: an approval updates the sandbox's policy. The tool is never re-run; the model sees the
    // answer and retries if it wants to.
    async beforeAgent(state, runtime) {
      const ask = (state as Record<string, unknown>)[EGRESS_REQUEST_KEY] as EgressRequest | null | undefined;
      if (ask?.status !== "asked") return undefined;
      const scope = scopeOf(runtime);
      const messages = ((state as { messages?: unknown[] }).messages ?? []) as Array<{ getType?: () => string; content?: unknown }>;
      const last = [...messages].reverse().find((m) => m.getType?.() === "human");
      const reply = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
      if (!scope || !isApproval(reply)) return { [EGRESS_REQUEST_KEY]: { ...ask, status: "denied" } } as never;
      try {
        const lease = await registry.acquire(scope, runtime.signal);
        await egressOf(lease.sandbox)?.approve(ask.host, ask.port);
        options.logger?.info({ host: ask.host, port: ask.port, thread_id: scope.threadId }, "egress approved by the user");
        return { [EGRESS_REQUEST_KEY]: { ...ask, status: "approved" } } as never;
      } catch (err) {
        options.logger?.warn({ err, host: ask.host }, "could not apply an egress approval");
        return { [EGRESS_REQUEST_KEY]: { ...ask, status: "denied" } } as never;
      }
    },
    async afterAgent(_state, runtime) {
      const scope = scopeOf(runtime);
      if (scope) await registry.releaseAfterAgent(scope);
    },
  };
}

/** The Sandbox middleware as a per-build factory (subagent builds get the variant without the release). */
export function sandboxMiddleware(options: SandboxMiddlewareOptions): MiddlewareFactory {
  return {
    name: SANDBOX_MIDDLEWARE_NAME,
    create: (build) => createSandboxMiddlewareSpec(options, { subagent: build.subagent }),
  };
}
