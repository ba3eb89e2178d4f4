import { loadAuthoring } from "@antler/kernel/authoring";
import { ScriptedChatModel } from "@antler/kernel/testing";
import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { MemorySaver, messagesStateReducer, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { BinaryOperatorAggregate } from "@langchain/langgraph/channels";
import { beforeAll, describe, expect, it } from "vitest";
import { createAntlerAgent } from "../src/index.js";
import { createAppendingMessagesReducer } from "../src/messages-channel.js";
import { tempDir } from "./fixtures.js";

// These tests hand tools to LangChain with no kernel started, so they load LangChain for the authoring helpers first.
beforeAll(() => loadAuthoring());

/** A small seeded generator, so a failing sequence can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One message of an update, described once and built twice (one copy per reducer: both reducers mutate their input). */
type Spec =
  | { kind: "human" | "ai" | "system" | "chunk"; text: string; id?: string }
  | { kind: "tool"; text: string; id?: string; callId: string }
  | { kind: "ai-calls"; text: string; id?: string }
  | { kind: "dict"; role: "user" | "assistant"; text: string; id?: string }
  | { kind: "string"; text: string }
  | { kind: "remove"; id: string };

function build(spec: Spec): unknown {
  const id = "id" in spec && spec.id !== undefined ? { id: spec.id } : {};
  switch (spec.kind) {
    case "human":
      return new HumanMessage({ content: spec.text, ...id });
    case "ai":
      return new AIMessage({ content: spec.text, ...id });
    case "ai-calls":
      return new AIMessage({
        content: [{ type: "text", text: spec.text }],
        tool_calls: [{ id: "c1", name: "add", args: { a: 1 } }],
        ...id,
      });
    case "system":
      return new SystemMessage({ content: spec.text, ...id });
    case "chunk":
      return new AIMessageChunk({ content: spec.text, ...id });
    case "tool":
      return new ToolMessage({ content: spec.text, tool_call_id: spec.callId, ...id });
    case "dict":
      return { role: spec.role, content: spec.text, ...id };
    case "string":
      return spec.text;
    case "remove":
      return new RemoveMessage({ id: spec.id });
  }
}

/** What a message is; `ids` maps the uuids our reducer generated to the ones LangGraph's generated for the same message. */
function canonical(list: readonly BaseMessage[], ids: Map<unknown, unknown>): unknown[] {
  return list.map((m) => ({
    class: m.constructor.name,
    type: m.getType(),
    content: m.content,
    id: ids.get(m.id) ?? m.id,
    kwargsId: ids.get(m.lc_kwargs.id) ?? m.lc_kwargs.id,
    tool_calls: (m as AIMessage).tool_calls,
    tool_call_id: (m as ToolMessage).tool_call_id,
  }));
}

/**
 * Applies the same random writes through LangGraph's reducer and through Antler's and compares, after every write,
 * the lists (classes, contents, ids with generated ones matched up), which items are the caller's own objects, and
 * errors.
 */
function runSequence(seed: number, steps: number): void {
  const appendingMessagesReducer = createAppendingMessagesReducer();
  const random = rng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  let counter = 0;
  const newId = () => (random() < 0.3 ? undefined : `m${seed}-${counter++}`);
  let stock: BaseMessage[] = [];
  let ours: BaseMessage[] = [];
  // Generated ids: stock's uuid -> ours' uuid, learned the first time a message without an id gets one.
  const generated = new Map<string, string>();
  // Which of our objects corresponds to which of stock's.
  const twin = new Map<unknown, unknown>();
  const ourObjects = new Set<unknown>();

  const fresh = (): Spec => {
    const text = `t${counter++}`;
    const r = random();
    if (r < 0.3) return { kind: "human", text, id: newId() };
    if (r < 0.5) return { kind: "ai", text, id: newId() };
    if (r < 0.6) return { kind: "ai-calls", text, id: newId() };
    if (r < 0.7) return { kind: "tool", text, id: newId(), callId: "c1" };
    if (r < 0.75) return { kind: "system", text, id: newId() };
    if (r < 0.82) return { kind: "chunk", text, id: newId() };
    if (r < 0.9) return { kind: "dict", role: pick(["user", "assistant"] as const), text, id: newId() };
    if (r < 0.93) return { kind: "string", text };
    return { kind: "human", text, id: `m${seed}-${Math.floor(random() * counter)}` }; // maybe an existing id
  };
  const existingId = (): string | undefined => {
    if (stock.length === 0) return undefined;
    return stock[Math.floor(random() * stock.length)]?.id;
  };

  // Earlier states, to write to again: a fork (time travel), or a step's writes applied twice to the same list,
  // as LangGraph does when a task reads its own writes.
  const earlier: Array<[BaseMessage[], BaseMessage[]]> = [];
  for (let step = 0; step < steps; step++) {
    earlier.push([stock, ours]);
    if (random() < 0.15) [stock, ours] = pick(earlier);
    const specs: Spec[] = [];
    const r = random();
    if (r < 0.6) {
      const n = Math.floor(random() * 4);
      for (let i = 0; i < n; i++) specs.push(fresh());
    } else if (r < 0.72) {
      const id = existingId();
      if (id) specs.push({ kind: pick(["human", "ai"] as const), text: `replaced${counter++}`, id });
      specs.push(fresh());
    } else if (r < 0.82) {
      const id = existingId();
      specs.push({ kind: "remove", id: id ?? "missing" });
    } else if (r < 0.86) {
      specs.push({ kind: "remove", id: "never-there" });
    } else if (r < 0.9) {
      specs.push(fresh(), { kind: "remove", id: REMOVE_ALL_MESSAGES }, fresh());
    } else if (r < 0.94) {
      // A repeated id inside one update.
      const s = fresh();
      specs.push(s, { kind: "ai", text: `again${counter++}`, ...("id" in s && s.id ? { id: s.id } : { id: "dup" }) });
    } else if (r < 0.97) {
      // A hook that pushed into the list in place.
      const s = fresh();
      if (s.kind !== "string" && s.kind !== "dict" && s.kind !== "chunk" && s.kind !== "remove" && "id" in s && s.id) {
        const a = build(s) as BaseMessage;
        const b = build(s) as BaseMessage;
        twin.set(a, b);
        ourObjects.add(b);
        stock.push(a);
        ours.push(b);
      }
      continue;
    } else {
      // A list read back from a checkpoint: same messages, a new array (both, so pairs of arrays stay pairs).
      stock = stock.slice();
      ours = ours.slice();
      continue;
    }

    // Ids the stock reducer generates stay unknown to ours: map a stock id in a spec to ours' id.
    const forOurs = (s: Spec): Spec => {
      if (!("id" in s) || s.id === undefined) return s;
      const mapped = generated.get(s.id);
      return mapped ? { ...s, id: mapped } : s;
    };
    const single = specs.length === 1 && random() < 0.3;
    const a = specs.map(build);
    const b = specs.map((s) => build(forOurs(s)));
    a.forEach((x, i) => {
      twin.set(x, b[i]);
      ourObjects.add(b[i]);
    });
    let stockError: unknown;
    let ourError: unknown;
    let nextStock: BaseMessage[] = stock;
    let nextOurs: BaseMessage[] = ours;
    try {
      nextStock = messagesStateReducer(stock, (single ? a[0] : a) as never) as BaseMessage[];
    } catch (error) {
      stockError = error;
    }
    try {
      nextOurs = appendingMessagesReducer(ours, single ? b[0] : b) as BaseMessage[];
    } catch (error) {
      ourError = error;
    }
    const where = `seed ${seed}, step ${step}`;
    expect(String(ourError), where).toBe(String(stockError));
    if (stockError) continue;
    expect(nextOurs.length, where).toBe(nextStock.length);
    const differentObjects: number[] = [];
    for (let i = 0; i < nextStock.length; i++) {
      const x = nextStock[i] as BaseMessage;
      const y = nextOurs[i] as BaseMessage;
      if (typeof x.id === "string" && typeof y.id === "string" && x.id !== y.id && !generated.has(x.id)) generated.set(x.id, y.id);
      // The same object in both, or both converted copies.
      if (twin.has(x) ? twin.get(x) !== y : ourObjects.has(y)) differentObjects.push(i);
    }
    expect(differentObjects, where).toEqual([]);
    const back = new Map<unknown, unknown>([...generated].map(([k, v]) => [v, k]));
    expect(canonical(nextOurs, back), where).toEqual(canonical(nextStock, new Map()));
    stock = nextStock;
    ours = nextOurs;
  }
}

describe("the messages channel's reducer", () => {
  it("gives LangGraph's messagesStateReducer's result for random appends, replacements, removals, dicts and chunks", () => {
    for (let seed = 1; seed <= 200; seed++) runSequence(seed, 40);
  });

  it("appends to a list it has seen without reading the list's messages", () => {
    const appendingMessagesReducer = createAppendingMessagesReducer();
    let list = appendingMessagesReducer([], [new HumanMessage({ content: "first", id: "a" })]);
    for (let i = 0; i < 50; i++) list = appendingMessagesReducer(list, [new AIMessage({ content: `${i}`, id: `x${i}` })]);
    let reads = 0;
    const watched = new Proxy(list[0] as object, {
      get(target, key, receiver) {
        reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    list[0] = watched;
    // Same length and last item as when indexed: the index still applies, so the first message is never read.
    const next = appendingMessagesReducer(list, [new HumanMessage({ content: "next", id: "n" })]);
    // A model's streamed answer arrives as a chunk: converted, it is appended the same way.
    const answered = appendingMessagesReducer(next, [new AIMessageChunk({ content: "answer", id: "r" })]);
    expect(answered).toHaveLength(53);
    expect(answered[51]).toMatchObject({ id: "n" });
    expect(answered[52]).toBeInstanceOf(AIMessage);
    expect(AIMessageChunk.isInstance(answered[52])).toBe(false);
    expect(reads).toBe(0);
  });

  it("keeps forks of one list apart when they append the same id at different places", () => {
    const appendingMessagesReducer = createAppendingMessagesReducer();
    const base = appendingMessagesReducer([], [new HumanMessage({ content: "q", id: "q" })]);
    const one = appendingMessagesReducer(base, [new AIMessage({ content: "x", id: "x" })]);
    const two = appendingMessagesReducer(base, [
      new AIMessage({ content: "y", id: "y" }),
      new AIMessage({ content: "x elsewhere", id: "x" }),
    ]);
    // Writing x to the first fork replaces its x; to the second, its own.
    const replaced = appendingMessagesReducer(one, [new AIMessage({ content: "x again", id: "x" })]) as BaseMessage[];
    expect(replaced.map((m) => [m.id, m.content])).toEqual([
      ["q", "q"],
      ["x", "x again"],
    ]);
    const replacedTwo = appendingMessagesReducer(two, [new AIMessage({ content: "x third", id: "x" })]) as BaseMessage[];
    expect(replacedTwo.map((m) => [m.id, m.content])).toEqual([
      ["q", "q"],
      ["y", "y"],
      ["x", "x third"],
    ]);
  });

  it("gives a message without an id a fresh uuid in both its id and lc_kwargs, as LangGraph does", () => {
    const appendingMessagesReducer = createAppendingMessagesReducer();
    const message = new HumanMessage("no id");
    const [first] = appendingMessagesReducer([], [message]) as BaseMessage[];
    expect(first).toBe(message);
    expect(message.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(message.lc_kwargs.id).toBe(message.id);
  });

  it("is the reducer of the messages channel of an agent Antler builds", () => {
    const { agent } = createAntlerAgent({
      model: new ScriptedChatModel(() => ({ text: "ok" })),
      baseDir: tempDir(),
      checkpointer: new MemorySaver(),
    });
    const graph = (agent as unknown as { graph: { channels: Record<string, unknown> } }).graph;
    const channel = graph.channels.messages as BinaryOperatorAggregate<unknown, unknown>;
    expect(channel).toBeInstanceOf(BinaryOperatorAggregate);
    expect(channel.operator).not.toBe(messagesStateReducer);
    expect(channel.operator.name).toBe("appendingMessagesReducer");
  });
});
