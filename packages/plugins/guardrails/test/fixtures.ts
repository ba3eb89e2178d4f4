import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type CodePlugin, definePlugin, type KernelConfigInput } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { captureLogs, type Script, type ScriptedCall, scriptedModelsPlugin, useTempDirs } from "@antler/kernel/testing";
import { AntlerClient, type StreamEvent } from "@antler/plugin-runtime";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach } from "vitest";
import { z } from "zod";
import guardrailsPlugin from "../src/index.js";

export const temp = useTempDirs();

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Registers a cleanup that runs after the current test, last registered first. */
export function onCleanup(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

/**
 * Tools in the groups RBAC filters on, each counting its runs so a test can tell whether a refused call ran:
 * `bash` (group bash), `read_notes` (file:read), `web_lookup` (web), `wipe_disk` (file:write).
 */
export function countingTools() {
  const runs: Record<string, number> = { bash: 0, read_notes: 0, web_lookup: 0, wipe_disk: 0 };
  const groups: Record<string, string> = { bash: "bash", read_notes: "file:read", web_lookup: "web", wipe_disk: "file:write" };
  const plugin = definePlugin({
    name: "counting-tools",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      for (const name of Object.keys(runs)) {
        ctx.tools.add(
          defineTool({
            name,
            description: `${name} for tests.`,
            schema: z.object({ q: z.string().optional() }),
            run: () => {
              runs[name] = (runs[name] ?? 0) + 1;
              return `${name} ran`;
            },
          }),
          { group: groups[name] },
        );
      }
    },
  });
  return { plugin, runs };
}

export interface GuardedClient {
  client: AntlerClient;
  calls(): ScriptedCall[];
  runs: Record<string, number>;
  logs: Array<Record<string, unknown>>;
}

/** An AntlerClient with scripted models `small` and `big`, the counting tools and the guardrails plugin. */
export async function guardedClient(options: {
  script: Script;
  config?: Record<string, unknown>;
  plugins?: CodePlugin[];
}): Promise<GuardedClient> {
  const root = temp.tempDir("antler-guardrails-");
  const scripted = scriptedModelsPlugin({ small: options.script, big: options.script });
  const tools = countingTools();
  const captured = captureLogs({ level: "info" });
  const client = await AntlerClient.create({
    config: {
      models: [
        { name: "small", provider: "scripted" },
        { name: "big", provider: "scripted" },
      ],
      storage: { backend: "memory" },
      title: { enabled: false },
      ...options.config,
    } as KernelConfigInput,
    plugins: [scripted, tools.plugin, guardrailsPlugin, ...(options.plugins ?? [])],
    cwd: root,
    env: {},
    discover: false,
    logger: captured.logger,
  });
  onCleanup(() => client.close());
  const calls = (): ScriptedCall[] => [...(scripted.models.get("small")?.calls ?? []), ...(scripted.models.get("big")?.calls ?? [])];
  return { client, calls, runs: tools.runs, logs: captured.lines };
}

/** The role config of the brief: admin may use everything, user only web and file:read on the small model. */
export const ROLES = {
  enabled: true,
  default_role: "user",
  roles: {
    admin: { tool_groups: ["*"], models: ["*"] },
    user: { tool_groups: ["web", "file:read"], models: ["small"] },
  },
};

/** Calls `tool` once, then answers "done" after seeing its result. */
export function callOnce(tool: string, args: Record<string, unknown> = { q: "x" }): Script {
  return (messages) => (ToolMessage.isInstance(messages.at(-1)) ? { text: "done" } : { toolCalls: [{ name: tool, args }] });
}

export const toolMessages = (messages: readonly BaseMessage[]): ToolMessage[] =>
  messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));

/** Runs one turn and collects its events. */
export async function turn(
  client: AntlerClient,
  message: string,
  options: Parameters<AntlerClient["stream"]>[1] = {},
): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of client.stream(message, options)) events.push(event);
  return events;
}

/** A loopback policy service: `answer` decides each request (or never answers). */
export interface PolicyServer {
  url: string;
  requests: Array<{ body: Record<string, unknown>; headers: IncomingMessage["headers"] }>;
}

export async function startPolicyServer(answer: (body: Record<string, unknown>, res: ServerResponse) => void): Promise<PolicyServer> {
  const requests: PolicyServer["requests"] = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      text += chunk;
    });
    req.on("end", () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      requests.push({ body, headers: req.headers });
      answer(body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onCleanup(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/decide`, requests };
}

/** Answers JSON with a status. */
export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
}
