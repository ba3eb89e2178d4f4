import { createHash, type Hash } from "node:crypto";
import { diffValues, type ValuesMessage, type ValuesPatch, type ValuesState } from "../values-delta.js";

/** Where a run's first patch starts: the thread's messages as the run found them (how many, and their digest). */
export interface RunStart {
  readonly messages: number;
  readonly digest?: string;
}

/** The digest of a message list as JSON: what the log checks a thread's saved messages against. */
export function digestMessages(messages: readonly ValuesMessage[]): string {
  const hash = createHash("sha256");
  for (const m of messages) hash.update(JSON.stringify(m)).update("\n");
  return hash.digest("base64url");
}

/**
 * `digestMessages`, continued from the digest of the list a thread's previous run started from when this list
 * begins with the same message objects (the runtime hands out one serialized object per message, run after
 * run): a run's start then costs its new messages, not the thread. Holds the latest list of up to `maxThreads`
 * threads (least recently used go first).
 */
export class MessagesDigester {
  private readonly latest = new Map<string, { messages: readonly ValuesMessage[]; hash: Hash }>();
  constructor(private readonly maxThreads = 128) {}

  digest(thread: string, messages: readonly ValuesMessage[]): string {
    const known = this.latest.get(thread);
    this.latest.delete(thread);
    let hash: Hash;
    let from = 0;
    if (known && startsWith(messages, known.messages)) {
      hash = known.hash.copy();
      from = known.messages.length;
    } else {
      hash = createHash("sha256");
    }
    for (let i = from; i < messages.length; i++) hash.update(JSON.stringify(messages[i])).update("\n");
    const digest = hash.copy().digest("base64url");
    // A copy of the list: the caller's array may change after this call, the hash must match what is kept.
    this.latest.set(thread, { messages: messages.slice(), hash });
    for (const oldest of this.latest.keys()) {
      if (this.latest.size <= this.maxThreads) break;
      this.latest.delete(oldest);
    }
    return digest;
  }
}

function startsWith(list: readonly ValuesMessage[], prefix: readonly ValuesMessage[]): boolean {
  if (prefix.length > list.length) return false;
  for (let i = 0; i < prefix.length; i++) if (list[i] !== prefix[i]) return false;
  return true;
}

/**
 * The thread as a run found it, from the run's first `values` event: its messages without the run's input
 * (the human message the run appended last). The other keys are not part of it: the first patch sets them all.
 */
export function runStartOf(first: ValuesState): ValuesState {
  const messages = first.messages ?? [];
  const last = messages.at(-1);
  return { messages: last?.type === "human" ? messages.slice(0, -1) : messages };
}

/**
 * Turns one stream's `values` events (whole states) into patches, each against the previous one; the first
 * against the thread as the run found it. Holds the previous state only (references, not copies).
 */
export class ValuesStreamEncoder {
  private previous: ValuesState | undefined;
  /** `digest`: whether the first patch's start carries the digest of the messages, and what computes it. */
  constructor(private readonly options: { digest: false | ((messages: readonly ValuesMessage[]) => string) }) {}

  encode(values: ValuesState): { patch: ValuesPatch; start?: RunStart; startMessages?: readonly ValuesMessage[] } {
    const previous = this.previous;
    this.previous = values;
    if (previous) return { patch: diffValues(previous, values) };
    const start = runStartOf(values);
    const messages = start.messages ?? [];
    return {
      patch: diffValues(start, values),
      start: { messages: messages.length, ...(this.options.digest ? { digest: this.options.digest(messages) } : {}) },
      startMessages: messages,
    };
  }
}
