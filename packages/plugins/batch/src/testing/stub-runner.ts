import { createHash } from "node:crypto";
import { appendFileSync } from "node:fs";
import type { AcceptanceReport, SubagentOutcome, SubagentRequest, SubagentRunner } from "@antler/plugin-subagents";

export interface SleepingStubRunnerOptions {
  /** How long each run takes, spent in a timer (off the CPU), like a subagent waiting on its model. Default 10. */
  readonly sleepMs?: number;
  /** The types it claims to serve. Default ["general-purpose"]. */
  readonly types?: readonly string[];
  /**
   * Appends one JSON line per run start and end (`{"event":"start"|"end","description",...,"pid"}`), so a test can
   * count executions across processes. Lines are single small O_APPEND writes, safe from many processes.
   */
  readonly executionsFile?: string;
  /** Runs whose prompt contains this text end as `failed`. */
  readonly failWhenPromptIncludes?: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * A stand-in subagent for tests and benchmarks: it sleeps, then answers deterministically from the prompt. It
 * makes no tool calls, so any acceptance criteria come back UNVERIFIED (it has no receipts to check them
 * against). It honours the abort signal like a real subagent: an aborted run ends `cancelled` at once.
 */
export class SleepingStubRunner implements SubagentRunner {
  private readonly options: SleepingStubRunnerOptions;
  private runs = 0;

  constructor(options: SleepingStubRunnerOptions = {}) {
    this.options = options;
  }

  /** Runs started so far in this process. */
  get started(): number {
    return this.runs;
  }

  types(): readonly string[] {
    return this.options.types ?? ["general-purpose"];
  }

  private record(event: "start" | "end" | "aborted", request: SubagentRequest): void {
    if (!this.options.executionsFile) return;
    const line = JSON.stringify({ event, description: request.description ?? null, pid: process.pid, t: Date.now() });
    appendFileSync(this.options.executionsFile, `${line}\n`);
  }

  async run(request: SubagentRequest): Promise<SubagentOutcome> {
    this.runs += 1;
    const started = Date.now();
    this.record("start", request);
    const aborted = await new Promise<boolean>((resolve) => {
      if (request.signal?.aborted) return resolve(true);
      const timer = setTimeout(() => {
        request.signal?.removeEventListener("abort", onAbort);
        resolve(false);
      }, this.options.sleepMs ?? 10);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(true);
      };
      request.signal?.addEventListener("abort", onAbort, { once: true });
    });
    const durationMs = Date.now() - started;
    if (aborted) {
      this.record("aborted", request);
      return { status: "cancelled", error: "aborted", result: "", resultSha256: sha256(""), receipts: [], durationMs };
    }
    const failed = this.options.failWhenPromptIncludes !== undefined && request.prompt.includes(this.options.failWhenPromptIncludes);
    const result = failed ? "" : `stub answer to: ${request.prompt.slice(0, 200)}`;
    const criteria = request.acceptanceCriteria ?? [];
    const acceptance: AcceptanceReport | undefined =
      criteria.length === 0
        ? undefined
        : {
            verdict: "UNVERIFIED",
            criteria: criteria.map((criterion) => ({ criterion, verdict: "UNVERIFIED", evidence: "the stub runner records no receipts" })),
          };
    this.record("end", request);
    return {
      status: failed ? "failed" : "completed",
      ...(failed ? { error: "the stub was told to fail this prompt" } : {}),
      result,
      resultSha256: sha256(result),
      model: "stub",
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      receipts: [],
      acceptance,
      durationMs,
    };
  }
}
