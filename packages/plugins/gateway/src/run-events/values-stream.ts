import { createHash } from "node:crypto";
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
  constructor(private readonly options: { digest: boolean }) {}

  encode(values: ValuesState): { patch: ValuesPatch; start?: RunStart; startMessages?: readonly ValuesMessage[] } {
    const previous = this.previous;
    this.previous = values;
    if (previous) return { patch: diffValues(previous, values) };
    const start = runStartOf(values);
    const messages = start.messages ?? [];
    return {
      patch: diffValues(start, values),
      start: { messages: messages.length, ...(this.options.digest ? { digest: digestMessages(messages) } : {}) },
      startMessages: messages,
    };
  }
}
