import type { StreamEvent } from "../client/events.js";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface TurnSummary {
  text: string;
  artifacts: string[];
  traceId: string | undefined;
  threadId: string | undefined;
  toolCalls: number;
  toolErrors: number;
  /** Tool calls a policy answered without running them (`Refused: …`), not counted as errors. */
  toolRefusals: number;
  /** Why the run stopped early (`loop_capped`, `paused`, …); null when it answered normally. */
  stopReason: string | null;
}

/**
 * Renders one streamed turn for a terminal: text as it arrives, each tool call with a spinner while it runs
 * and its outcome when it returns, and the presented files at the end. Without a TTY it prints plain lines.
 */
export class TurnRenderer {
  private readonly pending = new Map<string, { name: string; line: string }>();
  private spinnerTimer: NodeJS.Timeout | undefined;
  private frame = 0;
  private atLineStart = true;
  private readonly summary: TurnSummary = {
    text: "",
    artifacts: [],
    traceId: undefined,
    threadId: undefined,
    toolCalls: 0,
    toolErrors: 0,
    toolRefusals: 0,
    stopReason: null,
  };

  constructor(
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    /** `events`: print custom events (from tools and middleware) on their own lines, as `antler run --events` does. */
    private readonly options: { tty?: boolean; events?: boolean } = {},
  ) {}

  private get tty(): boolean {
    return this.options.tty ?? this.out.isTTY === true;
  }

  handle(event: StreamEvent): void {
    if (event.type === "messages-tuple") {
      const d = event.data;
      if (d.type === "ai" && "tool_calls" in d) {
        for (const call of d.tool_calls) this.startTool(call.id, call.name, call.args);
      } else if (d.type === "ai" && ("reasoning" in d || "tool_call_chunks" in d)) {
        // Reasoning and tool call pieces are not part of the answer; the finished tool call is shown when it arrives.
      } else if (d.type === "ai") {
        this.clearSpinnerLine();
        this.out.write(d.content);
        this.summary.text += d.content;
        this.atLineStart = d.content.endsWith("\n");
      } else if (d.type === "tool") {
        this.finishTool(d.tool_call_id, d.name, d.status, d.content);
      }
    } else if (event.type === "custom" && this.options.events) {
      this.clearSpinnerLine();
      this.newline();
      this.out.write(`· event ${JSON.stringify(event.data)}\n`);
    } else if (event.type === "values") {
      this.summary.artifacts = event.data.artifacts;
    } else if (event.type === "end") {
      this.summary.traceId = event.data.trace_id;
      this.summary.threadId = event.data.thread_id;
      this.summary.stopReason = event.data.stop_reason;
    }
  }

  private newline(): void {
    if (!this.atLineStart) this.out.write("\n");
    this.atLineStart = true;
  }

  private startTool(id: string, name: string, args: Record<string, unknown>): void {
    this.newline();
    const shownArgs = JSON.stringify(args);
    const line = `${name}(${shownArgs.length > 80 ? `${shownArgs.slice(0, 77)}...` : shownArgs})`;
    this.pending.set(id, { name, line });
    this.summary.toolCalls += 1;
    if (!this.tty) {
      this.out.write(`→ ${line}\n`);
      return;
    }
    this.renderSpinner();
    this.spinnerTimer ??= setInterval(() => this.renderSpinner(), 80);
    this.spinnerTimer.unref?.();
  }

  private renderSpinner(): void {
    const running = [...this.pending.values()];
    if (running.length === 0) return;
    this.frame = (this.frame + 1) % SPINNER.length;
    this.out.write(`\r\x1b[2K${SPINNER[this.frame]} ${running.map((r) => r.name).join(", ")}`);
  }

  private clearSpinnerLine(): void {
    if (this.tty && this.pending.size > 0) this.out.write("\r\x1b[2K");
  }

  private finishTool(id: string, name: string | undefined, status: "success" | "error", content: string): void {
    const call = this.pending.get(id);
    this.pending.delete(id);
    // A refusal (a guardrail or policy answered the call without running it) is not a failure of the tool.
    const refused = status === "error" && content.startsWith("Refused:");
    if (refused) this.summary.toolRefusals += 1;
    else if (status === "error") this.summary.toolErrors += 1;
    const mark = refused ? "⊘" : status === "error" ? "✗" : "✓";
    const firstLine = content.split("\n")[0]?.slice(0, 160);
    const detail = refused ? ` refused:${firstLine?.slice("Refused:".length)}` : status === "error" ? `: ${firstLine}` : "";
    this.clearSpinnerLine();
    this.out.write(`${mark} ${call?.line ?? name ?? id}${detail}\n`);
    this.atLineStart = true;
    if (this.pending.size === 0 && this.spinnerTimer) {
      clearInterval(this.spinnerTimer);
      this.spinnerTimer = undefined;
    } else if (this.tty) {
      this.renderSpinner();
    }
  }

  /** Something else is about to write to the same terminal (a log line): end the current line so it starts its own. */
  breakLine(): void {
    this.clearSpinnerLine();
    this.newline();
  }

  finish(): TurnSummary {
    if (this.spinnerTimer) clearInterval(this.spinnerTimer);
    this.spinnerTimer = undefined;
    this.clearSpinnerLine();
    this.newline();
    return this.summary;
  }
}
