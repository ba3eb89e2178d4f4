import { describe, expect, it } from "vitest";
import {
  applyValuesFrame,
  applyValuesPatch,
  diffMessages,
  diffValues,
  type ValuesFrame,
  type ValuesMessage,
  ValuesPatchMismatchError,
  type ValuesState,
} from "../src/values-delta.js";

/** mulberry32: a small seeded generator, so every run of the property tests sees the same cases. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Message = ValuesMessage & { content: string };
const human = (id: string, content = `q ${id}`): Message => ({ type: "human", id, content });
const ai = (id: string, content = `a ${id}`): Message => ({ type: "ai", id, content });

function state(messages: ValuesMessage[], extra: Partial<Record<string, unknown>> = {}): ValuesState {
  return { title: null, messages, artifacts: [], summary_text: null, todos: null, stop_reason: null, ...extra };
}

/** One random step of an agent's state: appends mostly, sometimes an edit, a removal, a summarization, a reorder. */
function step(random: () => number, previous: ValuesState, counter: { n: number }): ValuesState {
  const messages = [...(previous.messages ?? [])];
  const pick = random();
  const fresh = () => (random() < 0.5 ? human : ai)(`m${counter.n++}`, `text ${counter.n} ${"x".repeat(Math.floor(random() * 20))}`);
  if (pick < 0.45 || messages.length === 0) {
    const count = 1 + Math.floor(random() * 3);
    for (let k = 0; k < count; k++) messages.push(fresh());
  } else if (pick < 0.55) {
    const at = Math.floor(random() * messages.length);
    messages[at] = { ...(messages[at] as ValuesMessage), content: `edited ${counter.n++}` } as Message;
  } else if (pick < 0.62) {
    messages.splice(Math.floor(random() * messages.length), 1);
  } else if (pick < 0.67) {
    // A summarization: keep the first message, remove a block after it, keep the rest.
    const end = 1 + Math.floor(random() * messages.length);
    messages.splice(1, end - 1);
  } else if (pick < 0.72) {
    messages.splice(Math.floor(random() * (messages.length + 1)), 0, fresh());
  } else if (pick < 0.75 && messages.length > 1) {
    const a = Math.floor(random() * messages.length);
    const b = Math.floor(random() * messages.length);
    [messages[a], messages[b]] = [messages[b] as ValuesMessage, messages[a] as ValuesMessage];
  } else if (pick < 0.8) {
    messages.push({ type: "ai", content: "no id" } as Message);
  }
  const extra: Record<string, unknown> = {};
  if (random() < 0.2) extra.title = `title ${counter.n++}`;
  if (random() < 0.2) extra.todos = [{ content: `todo ${counter.n++}`, status: "pending" }];
  if (random() < 0.1) extra.artifacts = [...((previous.artifacts as string[]) ?? []), `/mnt/user-data/outputs/${counter.n++}.md`];
  return { ...previous, ...extra, messages };
}

/** The frames of a run over `states` (the first relative to `base`) as they go over the wire: JSON text. */
function wireFrames(base: ValuesState, states: ValuesState[]): ValuesFrame[] {
  const frames: ValuesFrame[] = [];
  let previous = base;
  for (const next of states) {
    frames.push(JSON.parse(JSON.stringify({ patch: diffValues(previous, next) })) as ValuesFrame);
    previous = next;
  }
  return frames;
}

describe("values delta projection", () => {
  it("an answer appended to a long thread is a keep and an add, whatever the thread's length", () => {
    const history = Array.from({ length: 1000 }, (_, i) => (i % 2 ? ai : human)(`h${i}`));
    const next = [...history, human("q"), ai("a", "Done.")];
    const patch = diffValues(state(history), state(next, { title: "T" }));
    expect(patch).toEqual({
      set: { title: "T" },
      messages: { base: 1000, ops: [{ keep: 1000 }, { add: [human("q"), ai("a", "Done.")] }] },
    });
    expect(JSON.stringify(patch).length).toBeLessThan(200);
  });

  it("an unchanged state is an empty patch; a summarization is a keep, a drop and a keep", () => {
    const messages = Array.from({ length: 600 }, (_, i) => human(`h${i}`));
    expect(diffValues(state(messages), state([...messages]))).toEqual({});
    const summarized = [messages[0] as ValuesMessage, ...messages.slice(501)];
    expect(diffValues(state(messages), state(summarized, { summary_text: "s" }))).toEqual({
      set: { summary_text: "s" },
      messages: { base: 600, ops: [{ keep: 1 }, { drop: 500 }, { keep: 99 }] },
    });
  });

  it("a message whose content changed is dropped and added in place", () => {
    const before = [human("a"), ai("b"), human("c")];
    const after = [human("a"), ai("b", "longer"), human("c")];
    expect(diffMessages(before, after)).toEqual({ base: 3, ops: [{ keep: 1 }, { drop: 1 }, { add: [ai("b", "longer")] }, { keep: 1 }] });
  });

  it("a patch that does not fit the state it is applied to is a coded error, never a wrong state", () => {
    const patch = diffValues(state([human("a")]), state([human("a"), ai("b")]));
    expect(() => applyValuesPatch(state([]), patch)).toThrow(ValuesPatchMismatchError);
    expect(() => applyValuesPatch(state([]), patch)).toThrow(/applies to 1 messages, the state holds 0/);
    const bad = { messages: { base: 1, ops: [{ keep: 2 }] } };
    expect(() => applyValuesPatch(state([human("a")]), bad)).toThrow(/covers messages 0–2 of 1/);
    expect(() => applyValuesPatch(state([human("a")]), { messages: { base: 1, ops: [] } })).toThrow(/cover 0 of 1/);
  });

  it("property: applying diff(previous, next) to previous gives next, over random edits (seeded, 3,000 steps)", () => {
    const random = seeded(0x5eed);
    const counter = { n: 0 };
    let previous = state([]);
    for (let k = 0; k < 3000; k++) {
      const next = step(random, previous, counter);
      const patch = JSON.parse(JSON.stringify(diffValues(previous, next)));
      expect(applyValuesPatch(previous, patch)).toEqual(JSON.parse(JSON.stringify(next)));
      // Never more than the new messages plus one op per message of the base: the patch is bounded by the change.
      const added = (patch.messages?.ops ?? []).flatMap((op: { add?: unknown[] }) => op.add ?? []).length;
      expect(added).toBeLessThanOrEqual((next.messages ?? []).length);
      previous = next;
    }
  });

  it("property: lists sharing message objects diff exactly as copies of them do (seeded, 2,000 steps)", () => {
    const random = seeded(0xd1ff);
    const counter = { n: 0 };
    let previous = state([]);
    for (let k = 0; k < 2000; k++) {
      const next = step(random, previous, counter);
      const before = previous.messages ?? [];
      const after = next.messages ?? [];
      // Copies compare by content only; the originals share the objects a step kept.
      expect(diffMessages(before, after)).toEqual(diffMessages(structuredClone(before), structuredClone(after)));
      previous = next;
    }
  });

  it("property: a client that joins at a random cut (snapshot, then patches) ends with the state of one that watched from the start", () => {
    const random = seeded(20260425);
    for (let trial = 0; trial < 300; trial++) {
      const counter = { n: 0 };
      let s = state([]);
      for (let k = Math.floor(random() * 30); k > 0; k--) s = step(random, s, counter);
      const base = s;
      const states: ValuesState[] = [];
      for (let k = 1 + Math.floor(random() * 25); k > 0; k--) {
        s = step(random, s, counter);
        states.push(s);
      }
      const frames = wireFrames(base, states);
      // The watcher holds the thread as the run found it, and applies every patch.
      let watcher: ValuesState = JSON.parse(JSON.stringify(base));
      for (const frame of frames) watcher = applyValuesFrame(watcher, frame);
      // The joiner gets a snapshot of the state after frame `cut` (the server folds the patches), then the rest.
      const cut = Math.floor(random() * frames.length);
      let server: ValuesState = base;
      for (const frame of frames.slice(0, cut + 1)) server = applyValuesFrame(server, frame);
      let joiner = applyValuesFrame(undefined, JSON.parse(JSON.stringify({ snapshot: server })));
      for (const frame of frames.slice(cut + 1)) joiner = applyValuesFrame(joiner, frame);
      expect(joiner).toEqual(watcher);
      expect(watcher).toEqual(JSON.parse(JSON.stringify(states.at(-1))));
    }
  });
});
