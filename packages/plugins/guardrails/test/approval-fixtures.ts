import { type CodePlugin, definePlugin, type KernelConfigInput } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type ScriptedCall, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { AntlerClient, type AntlerClientOptions, type StreamEvent } from "@antler/plugin-runtime";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { z } from "zod";
import guardrailsPlugin from "../src/index.js";

/** What each tool ran with, in order, across every client built on the same ledger. */
export type Ledger = Array<{ tool: string; args: Record<string, unknown> }>;

/** `bash` (group bash), `write_file` (file:write) and `read_notes` (file:read); each run is written to `ledger`. */
export function ledgerTools(ledger: Ledger) {
  return definePlugin({
    name: "ledger-tools",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      const add = (name: string, group: string, schema: z.ZodObject) =>
        ctx.tools.add(
          defineTool({
            name,
            description: `${name} for tests.`,
            schema,
            run: (args: Record<string, unknown>) => {
              ledger.push({ tool: name, args });
              return `${name} ran with ${JSON.stringify(args)}`;
            },
          }),
          { group },
        );
      add("bash", "bash", z.object({ command: z.string() }));
      add("write_file", "file:write", z.object({ path: z.string(), content: z.string().max(100) }));
      add("read_notes", "file:read", z.object({ q: z.string().optional() }));
    },
  });
}

/** Asks for `calls` in the first model call, then answers with every tool result it sees. */
export function callThenReport(calls: Array<{ name: string; args: Record<string, unknown>; id: string }>): ScriptFunction {
  return (messages) => {
    const results = messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    if (results.length === 0) return { toolCalls: calls };
    return { text: `results: ${results.map((r) => `[${r.tool_call_id}] ${String(r.content)}`).join(" | ")}` };
  };
}

export const DEFAULT_APPROVAL = {
  timeout: "1h",
  rules: [
    { name: "shell", tools: ["bash"], reason: "Shell commands change the machine" },
    { name: "writes", groups: ["file:write"], when: { args: { path: { matches: "^/etc/" } } } },
  ],
};

export interface ApprovalClient {
  client: AntlerClient;
  calls(): ScriptedCall[];
}

/** A client on a SQLite file under `dir` with the scripted model `m`, the ledger tools and guardrails' approval. */
export async function approvalClient(options: {
  dir: string;
  ledger: Ledger;
  script: ScriptFunction;
  approval?: Record<string, unknown>;
  storage?: Record<string, unknown>;
  config?: Record<string, unknown>;
  runLeases?: AntlerClientOptions["runLeases"];
  plugins?: CodePlugin[];
  maxActiveRuns?: number;
}): Promise<ApprovalClient> {
  const scripted = scriptedModelsPlugin({ m: options.script });
  const client = await AntlerClient.create({
    config: {
      models: [{ name: "m", provider: "scripted" }],
      storage: options.storage ?? { backend: "sqlite" },
      title: { enabled: false },
      approval: options.approval ?? DEFAULT_APPROVAL,
      ...options.config,
    } as KernelConfigInput,
    plugins: [scripted, ledgerTools(options.ledger), guardrailsPlugin, ...(options.plugins ?? [])],
    cwd: options.dir,
    env: {},
    discover: false,
    ...(options.runLeases ? { runLeases: options.runLeases } : {}),
    ...(options.maxActiveRuns ? { maxActiveRuns: options.maxActiveRuns } : {}),
  });
  return { client, calls: () => [...(scripted.models.get("m")?.calls ?? [])] };
}

export async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

export const customOf = (events: readonly StreamEvent[], type: string) =>
  events.filter((e) => e.type === "custom" && (e.data as { type?: unknown }).type === type).map((e) => e.data as Record<string, unknown>);

export const toolResults = (messages: readonly BaseMessage[]) => messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
