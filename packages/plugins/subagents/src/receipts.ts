import { createHash } from "node:crypto";
import { posix } from "node:path";
import { type MiddlewareSpec, SANDBOX_VIRTUAL_ROOTS } from "@antler/kernel";
import { messageText } from "@antler/plugin-runtime";
import { ToolMessage } from "@langchain/core/messages";
import { Command, isCommand } from "@langchain/langgraph";
import type { ToolReceipt } from "./contract.js";

export const RECEIPTS_MIDDLEWARE_NAME = "Receipts";
/** How much of a bash run's output a receipt keeps, for `tests_passed:` checks. */
export const OUTPUT_TAIL_CHARS = 4000;
const WRITE_TOOLS: ReadonlySet<string> = new Set(["write_file", "str_replace"]);

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Arguments in a canonical form (sorted keys), so equal arguments hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * How a sandbox `bash` result ended, from the footer the sandbox tools put last: `[exit code N]`, a timeout or a
 * signal; no footer on a success means exit code 0. Refusals (`Error: ...`) have none.
 */
export function bashExitCode(output: string, status: "success" | "error"): number | undefined {
  if (status === "error" || output.startsWith("Error:")) return undefined;
  const tail = output.trimEnd();
  const m = /\[exit code (-?\d+)\]$/.exec(tail);
  if (m) return Number(m[1]);
  if (/\[(timed out after|killed by signal)[^\]]*\]$/.test(tail)) return undefined;
  return 0;
}

/** Collects the receipts of one subagent run, numbered in call order. */
export class ReceiptRecorder {
  private readonly list: ToolReceipt[] = [];
  private counter = 0;

  /** A copy of the receipts recorded so far. */
  snapshot(): ToolReceipt[] {
    return [...this.list];
  }

  get size(): number {
    return this.list.length;
  }

  /** Reserves the next id (`r1`, `r2`, ...) at the moment the call starts, so ids follow call order. */
  nextId(): string {
    this.counter += 1;
    return `r${this.counter}`;
  }

  add(receipt: ToolReceipt): void {
    this.list.push(receipt);
    this.list.sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
  }
}

function toolMessageOf(result: ToolMessage | Command): ToolMessage | undefined {
  if (ToolMessage.isInstance(result)) return result;
  if (!isCommand(result)) return undefined;
  const update = result.update as unknown;
  const messages = Array.isArray(update)
    ? (update as [string, unknown][]).filter(([k]) => k === "messages").flatMap(([, v]) => (Array.isArray(v) ? v : [v]))
    : ((update as { messages?: unknown } | undefined)?.messages as unknown[] | undefined);
  return (Array.isArray(messages) ? messages : []).find((m): m is ToolMessage => ToolMessage.isInstance(m));
}

/** The same result with the receipt label in front of the tool message's text, so the subagent can cite it. */
function labelled(result: ToolMessage | Command, message: ToolMessage, label: string): ToolMessage | Command {
  const text = messageText(message.content);
  const copy = new ToolMessage({
    content: `${label} ${text}`,
    tool_call_id: message.tool_call_id,
    ...(message.name !== undefined ? { name: message.name } : {}),
    ...(message.id !== undefined ? { id: message.id } : {}),
    status: message.status ?? "success",
    ...(message.artifact !== undefined ? { artifact: message.artifact } : {}),
    additional_kwargs: { ...message.additional_kwargs, antler_receipt: label.slice(1, -1).split(" ")[0] },
  });
  if (!isCommand(result)) return copy;
  const update = result.update as unknown;
  const swap = (v: unknown) => (v === message ? copy : Array.isArray(v) ? v.map((m) => (m === message ? copy : m)) : v);
  const next = Array.isArray(update)
    ? (update as [string, unknown][]).map(([k, v]) => [k, k === "messages" ? swap(v) : v] as [string, unknown])
    : { ...(update as Record<string, unknown>), messages: swap((update as { messages?: unknown }).messages) };
  return new Command({
    update: next as never,
    ...(result.goto !== undefined ? { goto: result.goto } : {}),
    ...(result.graph !== undefined ? { graph: result.graph } : {}),
  });
}

/**
 * The subagent-side recorder: every tool call becomes a receipt `[rN tool]` with its status, the sha256 of its
 * canonical arguments and of its output, the output size and the time. The label is put in front of the tool's
 * output so the subagent can cite it (`label: false` records without labelling). Placed outermost, it sees the
 * final outcome of each call, refusals included.
 */
export function receiptsMiddleware(
  recorderOf: (context: unknown) => ReceiptRecorder | undefined,
  options: { label?: boolean } = {},
): MiddlewareSpec {
  // Unlabelled (receipts_enabled: false), calls are still recorded: acceptance checks need the evidence,
  // only the citations go.
  const label = options.label ?? true;
  return {
    name: RECEIPTS_MIDDLEWARE_NAME,
    async wrapToolCall(request, handler) {
      const recorder = recorderOf(request.runtime.context);
      if (!recorder) return handler(request);
      const id = recorder.nextId();
      const tool = request.toolCall.name;
      const args = (request.toolCall.args ?? {}) as Record<string, unknown>;
      const startedAt = new Date();
      const started = performance.now();
      const base = {
        id,
        tool,
        argsSha256: sha256(canonicalJson(args)),
        startedAt: startedAt.toISOString(),
        ...(typeof args.command === "string" && tool === "bash" ? { command: args.command } : {}),
        ...(typeof args.path === "string" && WRITE_TOOLS.has(tool)
          ? { path: posix.resolve(SANDBOX_VIRTUAL_ROOTS.workspace, args.path) }
          : {}),
      };
      let result: ToolMessage | Command;
      try {
        result = await handler(request);
      } catch (err) {
        const text = `Error: ${(err as Error)?.message ?? String(err)}`;
        recorder.add({
          ...base,
          status: "error",
          outputSha256: sha256(text),
          outputBytes: Buffer.byteLength(text),
          durationMs: Math.round(performance.now() - started),
        });
        throw err;
      }
      const message = toolMessageOf(result);
      const output = message ? messageText(message.content) : "";
      const status = message?.status === "error" ? "error" : "success";
      recorder.add({
        ...base,
        status,
        outputSha256: sha256(output),
        outputBytes: Buffer.byteLength(output),
        durationMs: Math.round(performance.now() - started),
        ...(tool === "bash" ? { outputTail: output.slice(-OUTPUT_TAIL_CHARS), ...withExit(bashExitCode(output, status)) } : {}),
      });
      return message && label ? labelled(result, message, `[${id} ${tool}]`) : result;
    },
  };
}

function withExit(code: number | undefined): { exitCode?: number } {
  return code === undefined ? {} : { exitCode: code };
}

/** One line per receipt, for the lead's view of a task result. */
export function formatReceipt(r: ToolReceipt): string {
  const what =
    r.command !== undefined
      ? ` $ ${r.command.length > 120 ? `${r.command.slice(0, 117)}...` : r.command}`
      : r.path !== undefined
        ? ` ${r.path}`
        : "";
  const exit = r.exitCode !== undefined ? ` exit=${r.exitCode}` : "";
  return `[${r.id} ${r.tool}] ${r.status}${exit} ${r.outputBytes}B out sha256:${r.outputSha256.slice(0, 12)}${what}`;
}
