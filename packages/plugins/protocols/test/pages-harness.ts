// What the browser-page tests share: the two pages built with Vite into a temp dir, served from the gateway's own
// origin (so the SDKs call the gateway with no CORS in between), a real gateway on loopback with SQLite storage,
// a scripted model that streams word by word slowly enough to watch, a `lookup` tool, and Alice's API key.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { ScriptedChatModel, type ScriptedStep } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { defineGatewayRoute, provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import type { BaseMessage } from "@langchain/core/messages";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { z } from "zod";
import protocols from "../src/index.js";

export const ALICE_KEY = "alice-pages-key-0123456789";
const packageDir = fileURLToPath(new URL("..", import.meta.url));
export const screenshotsDir = join(packageDir, "..", "..", "..", "docs", "screenshots");

/** Sixty numbered words, streamed one by one: long enough to stop or reload in the middle. */
export const LONG_STORY = Array.from({ length: 60 }, (_, i) => `word${i + 1}`).join(" ");
export const LOOKUP_ANSWER = "An antler is a branched bone that deer grow and shed every year.";

const textOf = (m: BaseMessage | undefined) => (m ? (typeof m.content === "string" ? m.content : m.text) : "");

/** Picks a scene by the user's last message: a long story, a tool call, a clarification, or an echo. */
export function pagesScript(messages: BaseMessage[]): ScriptedStep {
  const last = messages.at(-1);
  if (last?.getType() === "tool" && (last as BaseMessage & { name?: string }).name === "lookup") return { text: LOOKUP_ANSWER };
  const human = textOf(messages[messages.map((m) => m.getType()).lastIndexOf("human")]).trim();
  if (/story/i.test(human)) return { text: LONG_STORY };
  if (/look up/i.test(human)) return { toolCalls: [{ name: "lookup", args: { word: "antler" } }] };
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
    };
  }
  if (/^(red|green|blue)$/i.test(human)) return { text: `Painting the chart ${human.toLowerCase()} now.` };
  return { text: `You said: ${human}. This answer arrives word by word.` };
}

/** A scripted model that waits between streamed chunks, so a page can be seen filling in as the text arrives. */
class SlowStreamingModel extends ScriptedChatModel {
  constructor(private readonly chunkDelayMs: number) {
    super({ respond: (messages) => pagesScript(messages) });
  }

  override async *_streamResponseChunks(...args: Parameters<ScriptedChatModel["_streamResponseChunks"]>) {
    for await (const chunk of super._streamResponseChunks(...args)) {
      yield chunk;
      if (chunk.text) await sleep(this.chunkDelayMs, undefined, { signal: args[1].signal });
    }
  }
}

const pagesTestPlugin = (chunkDelayMs: number, pagesDir: string) =>
  definePlugin({
    name: "protocol-pages-test",
    version: "0.1.0",
    kernel: "^0.1.0",
    setup(ctx) {
      const model = new SlowStreamingModel(chunkDelayMs);
      ctx.models.addProvider({ id: "scripted-slow", create: () => model });
      ctx.tools.add(
        defineTool({
          name: "lookup",
          description: "Looks a word up in the dictionary.",
          schema: z.object({ word: z.string() }),
          run: async ({ word }) => {
            await sleep(150);
            return JSON.stringify({ word, meaning: "a branched bone that deer grow" });
          },
        }),
      );
      // The built pages, served by the gateway at /pages/<name>/ with no auth (they hold no secret; the key is typed in).
      provideGatewayRoutes(ctx, {
        routes: [
          defineGatewayRoute({
            method: "GET",
            path: "/pages/*",
            mount: "root",
            auth: "none",
            handler: ({ request }) => serveFile(pagesDir, new URL(request.url).pathname.slice("/pages/".length)),
          }),
        ],
      });
    },
  });

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

function serveFile(root: string, path: string): Response {
  const relative = normalize(decodeURIComponent(path.endsWith("/") || path === "" ? `${path}index.html` : path));
  if (relative.startsWith("..")) return new Response("not found", { status: 404 });
  try {
    const body = readFileSync(join(root, relative));
    return new Response(body, { headers: { "content-type": CONTENT_TYPES[extname(relative)] ?? "application/octet-stream" } });
  } catch {
    return new Response("not found", { status: 404 });
  }
}

/** Builds one page (`ai-sdk` or `langgraph`) with Vite's JS API into `<outRoot>/<name>`. */
export async function buildPage(name: "ai-sdk" | "langgraph", outRoot: string): Promise<void> {
  const { build } = await import("vite");
  await build({
    configFile: join(packageDir, "pages", name, "vite.config.ts"),
    logLevel: "error",
    build: { outDir: join(outRoot, name), emptyOutDir: true },
  });
}

export interface PagesServer {
  url: string;
  client: AntlerClient;
  gateway: RunningGateway;
  close(): Promise<void>;
}

/** Builds the named pages, then starts a real gateway on a loopback port that serves them and the protocols. */
export async function startPagesServer(
  pages: Array<"ai-sdk" | "langgraph">,
  options: { chunkDelayMs?: number } = {},
): Promise<PagesServer> {
  const baseDir = mkdtempSync(join(tmpdir(), "antler-pages-"));
  const pagesDir = join(baseDir, "pages");
  mkdirSync(pagesDir);
  for (const name of pages) await buildPage(name, pagesDir);
  const client = await AntlerClient.create({
    config: {
      base_dir: baseDir,
      models: [{ name: "scripted", provider: "scripted-slow" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
    },
    plugins: [pagesTestPlugin(options.chunkDelayMs ?? 90, pagesDir), protocols],
    cwd: baseDir,
    env: {},
    discover: false,
  });
  const gateway = await startGateway({
    client,
    config: { port: 0, auth: { mode: "api_keys", api_keys: [{ key: ALICE_KEY, user: "alice" }] } },
    shutdownGraceMs: 500,
  }).catch(async (error: unknown) => {
    await client.close();
    throw error;
  });
  return {
    url: gateway.url,
    client,
    gateway,
    async close() {
      await gateway.close();
      await client.close();
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

/** Saves a 1280×800 screenshot as docs/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotsDir, { recursive: true });
  await page.screenshot({ path: join(screenshotsDir, `${name}.png`) });
}

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface PageUnderTest {
  /** The server of the current file (set in its beforeAll). */
  readonly server: PagesServer;
  /** Opens the page in a fresh 1280×800 browser context with Alice's key, on `thread` when given. */
  open(thread?: string): Promise<Page>;
}

/** Starts the pages server for page `name` and Chromium before the enclosing suite's tests, and closes both after. */
export function usePageUnderTest(name: "ai-sdk" | "langgraph", executablePath: string): PageUnderTest {
  let server: PagesServer | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    server = await startPagesServer([name]);
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`the ${name} page's server and browser start in beforeAll`);
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    async open(thread) {
      const context = await started(browser).newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.addInitScript(`sessionStorage.setItem("antler.pages.apiKey", ${JSON.stringify(ALICE_KEY)})`);
      await page.goto(`${started(server).url}/pages/${name}/${thread ? `?thread=${encodeURIComponent(thread)}` : ""}`);
      await page.getByLabel("Message", { exact: true }).waitFor();
      return page;
    },
  };
}

/** Types `text` into the message box and presses Send. */
export async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel("Message", { exact: true }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

/** The thread id the page keeps in its URL. */
export const threadOf = (page: Page) => new URL(page.url()).searchParams.get("thread") ?? "";

/** Waits for the story's word 3, then word 20, in `answer`: the later read extends the earlier, and neither is the whole story. */
export async function expectAnswerGrowing(answer: Locator): Promise<void> {
  await answer.getByText(/\bword3\b/).waitFor();
  const first = (await answer.textContent()) ?? "";
  await answer.getByText(/\bword20\b/).waitFor();
  const second = (await answer.textContent()) ?? "";
  expect(first).not.toContain("word20");
  expect(second.length).toBeGreaterThan(first.length);
  expect(second).not.toContain("word60");
}
