import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type CodePlugin, definePlugin, threadPaths } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { captureLogs, ScriptedChatModel, type ScriptedStep } from "@antler/kernel/testing";
import batchPlugin from "@antler/plugin-batch";
import { stubRunnerPlugin } from "@antler/plugin-batch/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import guardrailsPlugin from "@antler/plugin-guardrails";
import { AntlerClient } from "@antler/plugin-runtime";
import schedulerPlugin from "@antler/plugin-scheduler";
import subagentsPlugin from "@antler/plugin-subagents";
import workspaceChangesPlugin from "@antler/plugin-workspace-changes";
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import consolePlugin from "../src/index.js";

export const ALICE_KEY = "alice-console-key-0123456789";
export const here = fileURLToPath(new URL(".", import.meta.url));
export const packageDir = join(here, "..");
export const webDist = join(packageDir, "dist", "web");
export const screenshotsDir = join(packageDir, "..", "..", "..", "docs", "screenshots");

/** Builds the SPA into dist/web when a test runs before the workspace build did (a fresh clone in an editor). */
export async function ensureConsoleBuilt(): Promise<void> {
  if (existsSync(join(webDist, "index.html"))) return;
  const { build } = await import("vite");
  await build({ configFile: join(packageDir, "web", "vite.config.ts"), logLevel: "error" });
}

/** A scripted model that waits between streamed chunks, so a page can be seen filling in as the text arrives. */
class SlowStreamingModel extends ScriptedChatModel {
  constructor(
    respond: (messages: BaseMessage[], callIndex: number) => ScriptedStep,
    private readonly chunkDelayMs: number,
  ) {
    super({ respond });
  }

  override async *_streamResponseChunks(...args: Parameters<ScriptedChatModel["_streamResponseChunks"]>) {
    for await (const chunk of super._streamResponseChunks(...args)) {
      yield chunk;
      if (chunk.text) await sleep(this.chunkDelayMs, undefined, { signal: args[1].signal });
    }
  }
}

/** Sixty numbered words: streamed one by one, so a dropped connection in the middle is easy to see and to check. */
export const LONG_STORY = Array.from({ length: 60 }, (_, i) => `word${i + 1}`).join(" ");

const textOf = (m: BaseMessage | undefined) => (m ? (typeof m.content === "string" ? m.content : m.text) : "");

/** What the console's end-to-end runs ask for; each keyword in the user's last message picks a scene. */
export function consoleScript(all: BaseMessage[]): ScriptedStep {
  // The uploads middleware appends a `<current_uploads>` note as a last human message; the scenes read the rest.
  const uploads = all.map(textOf).find((t) => t.startsWith("<current_uploads>")) ?? "";
  const messages = all.filter((m) => !textOf(m).startsWith("<current_uploads>"));
  const lastHumanAt = messages.map((m) => m.getType()).lastIndexOf("human");
  const human = textOf(messages[lastHumanAt]);
  const last = messages.at(-1);
  const lastTool = last?.getType() === "tool" ? (last as BaseMessage & { name?: string }).name : undefined;
  const usage = { input_tokens: 40, output_tokens: 25 };
  if (/^destination:/m.test(human)) {
    const answers = Object.fromEntries(human.split("\n").map((line) => [line.split(":")[0], line.slice(line.indexOf(":") + 1).trim()]));
    return { text: `Thanks! Planning ${answers.destination} for ${answers.travellers} travellers from ${answers.start}.`, usage };
  }
  if (/^(red|green|blue|teal)$/.test(human.trim())) return { text: `Painting it ${human.trim()}.`, usage };
  if (/colour/i.test(human)) {
    return {
      toolCalls: [
        {
          name: "ask_clarification",
          args: {
            question: "Which colour should the chart use?",
            clarification_type: "approach_choice",
            options: ["red", "green", "blue"],
          },
        },
      ],
      usage,
    };
  }
  if (/story/i.test(human)) return { text: LONG_STORY, usage };
  if (/flaky/i.test(human)) {
    // The provider fails the first time the question is asked, and answers when it is asked again (Retry).
    const asked = messages.filter((m) => m.getType() === "human" && /flaky/i.test(textOf(m))).length;
    return asked >= 2 ? { text: "Recovered on retry.", usage } : { error: "the provider answered 503 Service Unavailable" };
  }
  if (/hello/i.test(human)) {
    return { text: "Hello from the scripted model. This answer arrives word by word, so you can watch it stream in.", usage };
  }
  if (/trip/i.test(human)) {
    return {
      toolCalls: [
        {
          name: "ask_clarification",
          args: {
            question: "A few details before I plan the trip:",
            clarification_type: "missing_info",
            context: "I can plan it once I know where, when and how.",
            fields: [
              { name: "destination", label: "Destination", type: "text", required: true, placeholder: "Lisbon" },
              { name: "notes", label: "Notes", type: "textarea" },
              { name: "travellers", label: "Travellers", type: "number", required: true },
              { name: "pace", label: "Pace", type: "select", options: ["relaxed", "busy"], required: true },
              { name: "interests", label: "Interests", type: "multi_select", options: ["food", "museums", "hiking"] },
              { name: "flexible", label: "Dates are flexible", type: "checkbox" },
              { name: "start", label: "Start date", type: "date", required: true },
            ],
          },
        },
      ],
      usage,
    };
  }
  if (/report/i.test(human)) {
    if (lastTool === "write_report")
      return { toolCalls: [{ name: "present_files", args: { filepaths: ["/mnt/user-data/outputs/summary.md"] } }] };
    if (lastTool === "present_files") return { text: "The summary is in the artifacts panel.", usage };
    const upload = /\/mnt\/user-data\/uploads\/\S+/.exec(uploads)?.[0] ?? "(no upload seen)";
    return {
      toolCalls: [
        {
          name: "write_report",
          args: {
            name: "summary.md",
            text: `# Upload summary\n\nRead **${upload}** and wrote this report.\n\n| item | value |\n| --- | --- |\n| files | 1 |\n\n\`\`\`python\ndef total(rows):\n    return sum(rows)  # the table's total\n\`\`\`\n\n<script>window.__pwned = true</script>\n`,
          },
        },
      ],
      usage,
    };
  }
  if (/deploy/i.test(human)) {
    // `run_command` needs a person's approval (see `approval` in startConsoleServer); the model reads its result.
    if (lastTool === "run_command") return { text: `Command finished: ${textOf(last)}`, usage };
    return { toolCalls: [{ name: "run_command", args: { command: "deploy --prod" } }], usage };
  }
  if (/showcase/i.test(human)) return showcaseScene(human, lastTool, usage);
  if (/wait/i.test(human)) return { text: "This never arrives: the run is cancelled first.", delayMs: 60_000 };
  return { text: `You said: ${human}`, usage };
}

/** Files the showcase scene writes to the thread's outputs: one of each kind the artifacts panel has a viewer for. */
export const SHOWCASE_FILES: Record<string, string> = {
  "data.csv": [
    "city,population,note",
    ...Array.from({ length: 30 }, (_, i) => `City ${String.fromCharCode(65 + (i % 26))}${i},${(i * 7919) % 1000},"quoted, with comma"`),
  ].join("\n"),
  "page.html":
    '<!doctype html><html><head><title>Report page</title></head><body style="font-family:sans-serif"><h1>Sandboxed report</h1>' +
    '<p id="status">scripts did not run</p><script>document.getElementById("status").textContent = "script ran";' +
    'try { parent.document.title = "pwned"; } catch { document.body.append(" / console out of reach"); }</script></body></html>',
  "chart.svg":
    '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60" viewBox="0 0 120 60"><rect width="120" height="60" fill="#e8f0fe"/>' +
    '<rect x="10" y="30" width="20" height="25" fill="#1a73e8"/><rect x="45" y="15" width="20" height="40" fill="#1a73e8"/>' +
    '<rect x="80" y="5" width="20" height="50" fill="#1a73e8"/></svg>',
  "doc.pdf": [
    "%PDF-1.4",
    "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
    "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj",
    "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >> endobj",
    "4 0 obj << /Length 44 >> stream",
    "BT /F1 18 Tf 20 70 Td (Quarterly PDF) Tj ET",
    "endstream endobj",
    "5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj",
    "trailer << /Root 1 0 R >>",
    "%%EOF",
  ].join("\n"),
  "analysis.py": "def mean(xs):\n    # the average of the rows\n    return sum(xs) / len(xs)\n",
};

/** The showcase answer: Markdown with everything the renderer covers; `outside` is an image URL on another host. */
export function showcaseAnswer(outside: string): string {
  return [
    "## Findings",
    "",
    "1. Gather the data",
    "   - from the **CSV** export",
    "     - nested third level",
    "   - from the notes",
    "2. Chart it",
    "",
    "| metric | left | centre | right |",
    "| --- | :--- | :---: | ---: |",
    "| growth | a | b | 12.5 |",
    "",
    "Inline math $E = mc^2$ and a display block:",
    "",
    "$$\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}$$",
    "",
    "```python",
    "print('hello')",
    "```",
    "",
    "![bar chart](chart.svg)",
    "",
    `![tracking pixel](${outside})`,
    "",
    "Prices like $5 and $10 stay text.",
    "",
    "![escaping path](../../secret.png)",
  ].join("\n");
}

function showcaseScene(human: string, lastTool: string | undefined, usage: { input_tokens: number; output_tokens: number }): ScriptedStep {
  if (lastTool === "present_files")
    return { text: showcaseAnswer(/https?:\/\/\S+/.exec(human)?.[0] ?? "http://example.invalid/x.png"), usage };
  if (lastTool === "write_report" || lastTool === "lookup_notes") {
    return {
      toolCalls: [{ name: "present_files", args: { filepaths: Object.keys(SHOWCASE_FILES).map((f) => `/mnt/user-data/outputs/${f}`) } }],
    };
  }
  return {
    toolCalls: [
      { name: "lookup_notes", args: { topic: "growth" } },
      ...Object.entries(SHOWCASE_FILES).map(([name, text]) => ({ name: "write_report", args: { name, text } })),
    ],
    usage,
  };
}

function slowModelPlugin(chunkDelayMs: number) {
  return definePlugin({
    name: "console-test-models",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      const model = new SlowStreamingModel((messages) => consoleScript(messages), chunkDelayMs);
      ctx.models.addProvider({ id: "scripted-slow", create: () => model });
    },
  });
}

/** `write_report(name, text)`: writes the thread's outputs file the way a sandbox tool would, taking a little while. */
function reportToolPlugin(baseDir: string) {
  return definePlugin({
    name: "console-test-tools",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.tools.add(
        defineTool({
          name: "write_report",
          description: "Writes a report file to the outputs folder.",
          schema: z.object({ name: z.string(), text: z.string() }),
          run: async ({ name, text }, runtime) => {
            await sleep(120);
            const context = (runtime as unknown as { context: Record<string, string> }).context;
            const paths = threadPaths(baseDir, context.user_id as string, context.thread_id as string);
            mkdirSync(paths.outputs, { recursive: true });
            writeFileSync(join(paths.outputs, name), text);
            return `wrote /mnt/user-data/outputs/${name}`;
          },
        }),
      );
      ctx.tools.add(
        defineTool({
          name: "lookup_notes",
          description: "Looks up the team's notes on a topic (answers in Markdown).",
          schema: z.object({ topic: z.string() }),
          run: async ({ topic }) => `**Notes on ${topic}**\n\n- first point\n  - a detail under it\n- second point`,
        }),
      );
      ctx.tools.add(
        defineTool({
          name: "run_command",
          description: "Runs a short deployment command.",
          schema: z.object({ command: z.string().max(40) }),
          run: async ({ command }) => `ran "${command}"`,
        }),
      );
    },
  });
}

export interface ConsoleServer {
  url: string;
  client: AntlerClient;
  gateway: RunningGateway;
  baseDir: string;
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/** A real gateway on a loopback port with the console, batches (stub runner), the scheduler and a scripted model. */
export async function startConsoleServer(
  options: {
    chunkDelayMs?: number;
    extraPlugins?: CodePlugin[];
    authNone?: boolean;
    approval?: boolean;
    sessionTtlSeconds?: number;
    secondModel?: boolean;
    /** The `models:` entries, in place of `scripted` (and `scripted-b`); each runs the scripted model. */
    models?: Array<Record<string, unknown> & { name: string }>;
    /** The console plugin's config (`artifacts.html_scripts`, ...). */
    consoleConfig?: Record<string, unknown>;
  } = {},
): Promise<ConsoleServer> {
  await ensureConsoleBuilt();
  const baseDir = mkdtempSync(join(tmpdir(), "antler-console-"));
  const captured = captureLogs({ level: "warn" });
  const client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: options.models?.map((m) => ({ provider: "scripted-slow", ...m })) ?? [
        { name: "scripted", provider: "scripted-slow" },
        ...(options.secondModel ? [{ name: "scripted-b", display_name: "Scripted B", provider: "scripted-slow" }] : []),
      ],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      uploads: { max_files: 5, max_file_bytes: 1024 * 1024 },
      ...(options.approval
        ? { approval: { timeout: "1h", rules: [{ name: "deploys", tools: ["run_command"], reason: "Deploys change the live site" }] } }
        : {}),
    },
    plugins: [
      slowModelPlugin(options.chunkDelayMs ?? 60),
      reportToolPlugin(baseDir),
      { plugin: consolePlugin, config: options.consoleConfig ?? {} },
      workspaceChangesPlugin,
      subagentsPlugin,
      { plugin: stubRunnerPlugin, config: { sleep_ms: 700, fail_when_prompt_includes: "FAIL" } },
      { plugin: batchPlugin, config: { worker: { poll_ms: 50 } } },
      { plugin: schedulerPlugin, config: { poll_interval_seconds: 3600 } },
      ...(options.approval ? [guardrailsPlugin] : []),
      ...(options.extraPlugins ?? []),
    ],
    cwd: baseDir,
    env: {},
    discover: false,
    logger: captured.logger,
  });
  const gateway = await startGateway({
    client,
    config: {
      port: 0,
      auth: options.authNone
        ? { mode: "none", user: "alice" }
        : {
            mode: "api_keys",
            api_keys: [{ key: ALICE_KEY, user: "alice" }],
            ...(options.sessionTtlSeconds ? { session_ttl_seconds: options.sessionTtlSeconds } : {}),
          },
    },
    shutdownGraceMs: 500,
  }).catch(async (error: unknown) => {
    await client.close();
    throw error;
  });
  return {
    url: gateway.url,
    client,
    gateway,
    baseDir,
    api(path, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      headers.set("authorization", `Bearer ${ALICE_KEY}`);
      if (json !== undefined) headers.set("content-type", "application/json");
      return fetch(`${gateway.url}/api${path}`, { ...rest, headers, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });
    },
    async close() {
      await gateway.close();
      await client.close();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

export interface DroppingProxy {
  url: string;
  /** Destroys every open connection through the proxy, in both directions: a network drop. */
  dropAll(): number;
  close(): Promise<void>;
}

/** A TCP proxy in front of the gateway, so a test can cut the browser's connections mid-stream. */
export async function startDroppingProxy(target: string): Promise<DroppingProxy> {
  const { createServer, connect } = await import("node:net");
  const { hostname, port } = new URL(target);
  const open = new Set<import("node:net").Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on("close", () => open.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as import("node:net").AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    dropAll() {
      const n = open.size;
      for (const s of open) s.destroy();
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
