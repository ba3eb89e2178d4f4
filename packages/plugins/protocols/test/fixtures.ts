// What the protocol conformance tests share: the callers' keys, the "lookup" tool, the failing middleware, the
// replies every scripted model gives, and a real gateway on loopback over a scripted model and the protocols plugin.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AntlerPlugin, definePlugin, emitCustomEvent } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { type ScriptedStep, type ScriptFunction, scriptedModelsPlugin } from "@antler/kernel/testing";
import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { AntlerClient } from "@antler/plugin-runtime";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { z } from "zod";
import protocols from "../src/index.js";

export const ALICE = "alice-key-0123456789abcdef";
export const BOB = "bob-key-0123456789abcdef01";

/** The text of the last message. */
export function lastText(messages: BaseMessage[]): string {
  const last = messages[messages.length - 1];
  return typeof last?.content === "string" ? last.content : "";
}

/** The text of the last human message. */
export function lastHumanText(messages: BaseMessage[]): string {
  const human = messages.findLast((m) => m.getType() === "human");
  return typeof human?.content === "string" ? human.content : "";
}

/** A `lookup` tool that emits a `lookup_progress` custom event, then answers with the word's meaning. */
export const lookupTools = definePlugin({
  name: "lookup-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "lookup",
        description: "Looks a word up.",
        schema: z.object({ word: z.string() }),
        run: async ({ word }, runtime) => {
          await emitCustomEvent({ type: "lookup_progress", word, done: true }, runtime as never);
          return JSON.stringify({ word, meaning: "a test word" });
        },
      }),
    );
  },
});

/**
 * A middleware that fails the run before the agent starts when `textOf` the messages asks for it ("please fail"):
 * a run that ends in error.
 */
export function failingMiddleware(textOf: (messages: BaseMessage[]) => string) {
  return definePlugin({
    name: "failing-middleware",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      ctx.middleware.add(
        {
          name: "FailOnRequest",
          create: () => ({
            name: "FailOnRequest",
            beforeAgent(state: { messages: BaseMessage[] }) {
              if (textOf(state.messages).includes("please fail")) throw new Error("the agent exploded");
              return undefined;
            },
          }),
        },
        { stage: "normal" },
      );
    },
  });
}

/**
 * The replies the scripted models share, or undefined: the lookup's answer after a tool result, "?" after an AI
 * message, a `lookup` call when `text` asks to "look up".
 */
export function lookupReply(messages: BaseMessage[], text: string): ScriptedStep | undefined {
  const last = messages[messages.length - 1];
  if (last instanceof ToolMessage) return { text: "The word means: a test word.", usage: { input_tokens: 7, output_tokens: 5 } };
  if (last instanceof AIMessage) return { text: "?" };
  if (text.includes("look up")) return { toolCalls: [{ id: "call-lookup", name: "lookup", args: { word: "antler" } }] };
  return undefined;
}

/** An `ask_clarification` call (id `call-ask`) asking `question` with a choice of `options`. */
export function askClarification(question: string, options: string[]): ScriptedStep {
  return {
    toolCalls: [{ id: "call-ask", name: "ask_clarification", args: { question, clarification_type: "approach_choice", options } }],
  };
}

export interface ProtocolsGatewayOptions {
  /** The temp folder's name prefix. */
  prefix: string;
  /** The scripted model `m`'s answers. */
  script: ScriptFunction;
  /** Plugins besides the scripted models and the protocols plugin. */
  plugins?: AntlerPlugin[];
  /** Config keys added to the base (SQLite storage, titles off, warn logging, model `m`). */
  config?: Record<string, unknown>;
  /** The gateway's `max_json_bytes`, when the test pins it. */
  maxJsonBytes?: number;
}

export interface ProtocolsGateway {
  dir: string;
  client: AntlerClient;
  gateway: RunningGateway;
  /** Closes the gateway and the client and removes the folder. */
  close(): Promise<void>;
}

/** An Antler client on SQLite with the scripted model `m`, and a gateway on loopback where Alice and Bob have API keys. */
export async function startProtocolsGateway(options: ProtocolsGatewayOptions): Promise<ProtocolsGateway> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  const client = await AntlerClient.create({
    config: {
      base_dir: dir,
      models: [{ name: "m", provider: "scripted" }],
      storage: { backend: "sqlite" },
      title: { enabled: false },
      logging: { level: "warn" },
      ...options.config,
    },
    plugins: [scriptedModelsPlugin({ m: { respond: options.script } }), ...(options.plugins ?? []), protocols],
    cwd: dir,
    env: {},
    discover: false,
  });
  const gateway = await startGateway({
    client,
    config: {
      port: 0,
      ...(options.maxJsonBytes === undefined ? {} : { max_json_bytes: options.maxJsonBytes }),
      auth: {
        mode: "api_keys",
        api_keys: [
          { key: ALICE, user: "alice" },
          { key: BOB, user: "bob" },
        ],
      },
    },
    shutdownGraceMs: 500,
  });
  return {
    dir,
    client,
    gateway,
    async close() {
      await gateway.close();
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
