import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { type SerializedMessage, StreamTranslator } from "../src/client/events.js";
import { danglingToolCallMiddleware } from "../src/middleware/dangling-tool-call.js";
import { SUMMARY_CUT_FIELD, summarizationMiddleware } from "../src/middleware/summarization.js";
import { uploadsMiddleware } from "../src/middleware/uploads.js";
import { tempDir } from "./fixtures.js";

// What a turn's middleware costs must not grow with the thread: each hook below is handed a 5,000-message thread
// through a proxy that counts the messages read, and must read about the current turn (or the tail after a
// summary), not the thread.

const THREAD = 5000;

function thread(n: number): BaseMessage[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0 ? new HumanMessage({ id: `h${i}`, content: `question ${i}` }) : new AIMessage({ id: `a${i}`, content: `answer ${i}` }),
  );
}

/** The messages behind a proxy that counts element reads (indexing, iteration, slice, find ...). */
function counted(messages: BaseMessage[]): { list: BaseMessage[]; reads: () => number } {
  let reads = 0;
  const list = new Proxy(messages, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { list, reads: () => reads };
}

type Hook = (request: unknown, handler: (request: unknown) => unknown) => unknown;
const runtime = { context: { thread_id: "t", user_id: "u" }, configurable: { thread_id: "t" } };
const request = (messages: BaseMessage[], state: Record<string, unknown> = {}) => ({
  messages,
  state: { messages, ...state },
  runtime,
  systemMessage: new SystemMessage(""),
  tools: [],
  model: {},
});
const reply = new AIMessage({ id: "reply", content: "ok" });

describe("per-turn middleware reads the turn, not the thread", () => {
  it("Uploads reads only the current turn's messages to know where the turn is", async () => {
    const messages = [...thread(THREAD), new HumanMessage({ id: "now", content: "and now?" })];
    const { list, reads } = counted(messages);
    const hook = uploadsMiddleware({ baseDir: tempDir() }).wrapModelCall as unknown as Hook;
    await hook(request(list), () => reply);
    expect(reads()).toBeLessThanOrEqual(4);
  });

  it("DanglingToolCall reads the messages added since the thread's previous request, and still repairs a call left dangling", async () => {
    const messages = thread(THREAD);
    const hook = danglingToolCallMiddleware().wrapModelCall as unknown as Hook;
    const sentOf = async (list: BaseMessage[]) => {
      let sent: BaseMessage[] = [];
      await hook(request(list), (r) => {
        sent = (r as { messages: BaseMessage[] }).messages;
        return reply;
      });
      return sent;
    };
    await sentOf(messages); // the first request of the thread in this process reads it once
    messages.push(new AIMessage({ id: "more-a", content: "an answer" }), new HumanMessage({ id: "more-h", content: "next" }));
    const next = counted(messages);
    expect(await sentOf(next.list)).toBe(next.list); // nothing to repair: handed on as it was
    expect(next.reads()).toBeLessThanOrEqual(8); // the two new ones and a few checks, not 5,000
    // A run cancelled mid-tool leaves a call without a result: the next request gets a placeholder right after it.
    messages.push(new AIMessage({ id: "late", content: "", tool_calls: [{ id: "c1", name: "bash", args: {} }] }));
    messages.push(new HumanMessage({ id: "after-cancel", content: "go on" }));
    const repaired = await sentOf(messages);
    const at = repaired.findIndex((m) => m.id === "late");
    expect(ToolMessage.isInstance(repaired[at + 1]) && (repaired[at + 1] as ToolMessage).tool_call_id).toBe("c1");
    expect(repaired).toHaveLength(messages.length + 1);
  });

  it("after a summary, Summarization reads the messages after the cut only", async () => {
    const messages = thread(THREAD);
    const from = messages.length - 12;
    const cut = { from, from_id: messages[from]?.id, first: 0, first_id: "h0" };
    const { list, reads } = counted(messages);
    const summarization = summarizationMiddleware({ triggerTokens: 100_000 });
    const update = await (summarization.beforeModel as unknown as (s: unknown, r: unknown) => Promise<unknown>)(
      { messages: list, summary_text: "earlier", [SUMMARY_CUT_FIELD]: cut },
      { signal: undefined },
    );
    expect(update).toBeUndefined(); // under the trigger: nothing to do
    let toModel: BaseMessage[] = [];
    await (summarization.wrapModelCall as unknown as Hook)(request(list, { summary_text: "earlier", [SUMMARY_CUT_FIELD]: cut }), (r) => {
      toModel = (r as { messages: BaseMessage[] }).messages;
      return reply;
    });
    expect(toModel.map((m) => m.id)).toEqual(["h0", ...messages.slice(from).map((m) => m.id)]);
    expect(reads()).toBeLessThanOrEqual(3 * 13);
  });

  it("values events serialize each message once per client, so a later run's frames do not re-serialize the thread", () => {
    const serialized = new WeakMap<BaseMessage, SerializedMessage>();
    const messages = thread(THREAD);
    const first = new StreamTranslator({ inputMessageId: "h4998", serialized });
    const a = first.translate("values", { messages });
    const input = new HumanMessage({ id: "next", content: "next" });
    const second = new StreamTranslator({ inputMessageId: "next", serialized });
    const b = second.translate("values", { messages: [...messages, input] });
    const valuesOf = (events: ReturnType<StreamTranslator["translate"]>) =>
      ((events.find((e) => e.type === "values")?.data ?? { messages: [] }) as { messages: SerializedMessage[] }).messages;
    // The same objects: the second run built only the new message.
    expect(valuesOf(b)[0]).toBe(valuesOf(a)[0]);
    expect(valuesOf(b)[THREAD - 1]).toBe(valuesOf(a)[THREAD - 1]);
    expect(valuesOf(b)).toHaveLength(THREAD + 1);
  });
});
