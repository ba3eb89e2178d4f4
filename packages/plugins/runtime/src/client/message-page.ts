import { AntlerError, ErrorCodes } from "@antler/kernel";
import { DeltaCheckpointSaver, isMessagesRef } from "@antler/storage-kit";
import type { BaseMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

/** Which of a thread's messages to read: the `limit` messages just before position `before` (default: the end). */
export interface MessagePageRequest {
  /** At most this many messages; omitted, all of them. */
  readonly limit?: number | undefined;
  /** 0-based position in the thread the page ends before (exclusive); omitted, the end of the thread. */
  readonly before?: number | undefined;
}

export interface MessagePage {
  /** The thread's channel values at its latest checkpoint, with `messages` set to the page. */
  readonly values: Record<string, unknown>;
  readonly messages: readonly BaseMessage[];
  /** How many messages the thread holds. */
  readonly total: number;
  /** Position of the page's first message in the thread. */
  readonly offset: number;
}

/**
 * Reads the thread's latest checkpoint and one page of its messages. With the delta checkpointer (each message
 * stored once, checkpoints naming them by `seq` ranges) only the page's rows are read and decoded, so the cost
 * is the page, not the thread; a checkpoint that holds its list whole (full mode, older data) is sliced, and
 * so is the list when no `limit` asks for a page.
 */
export async function readMessagePage(
  saver: BaseCheckpointSaver,
  config: { configurable: { thread_id: string; checkpoint_ns: string } },
  request: MessagePageRequest,
): Promise<MessagePage> {
  // The whole thread goes through the saver itself, which keeps recently used threads decoded.
  if (saver instanceof DeltaCheckpointSaver && request.limit !== undefined) {
    const tuple = await saver.inner.getTuple(config);
    const values = { ...((tuple?.checkpoint.channel_values ?? {}) as Record<string, unknown>) };
    const ref = values[saver.channel];
    if (isMessagesRef(ref)) {
      const [offset, end] = pageBounds(ref.n, request);
      const wanted = rangesBetween(ref.r, offset, end);
      const rows = await saver.log.read(config.configurable.thread_id, config.configurable.checkpoint_ns, wanted);
      const bySeq = new Map(rows.map((row) => [row.seq, row]));
      const messages: BaseMessage[] = [];
      for (let k = 0; k < wanted.length; k += 2) {
        for (let seq = wanted[k] as number; seq < (wanted[k + 1] as number); seq++) {
          const row = bySeq.get(seq);
          if (!row) {
            throw new AntlerError(
              ErrorCodes.STORAGE_UNAVAILABLE,
              `the message log of thread ${config.configurable.thread_id} lacks message ${seq}`,
              {
                hint: "The thread's checkpoint and message log disagree; read it again, or restore the thread from a backup.",
              },
            );
          }
          messages.push((await saver.serde.loadsTyped(row.type, row.data)) as BaseMessage);
        }
      }
      values[saver.channel] = messages;
      return { values, messages, total: ref.n, offset };
    }
  }
  const tuple = await saver.getTuple(config);
  const values = { ...((tuple?.checkpoint.channel_values ?? {}) as Record<string, unknown>) };
  const all = (values.messages as BaseMessage[] | undefined) ?? [];
  const [offset, end] = pageBounds(all.length, request);
  const messages = all.slice(offset, end);
  values.messages = messages;
  return { values, messages, total: all.length, offset };
}

/** `[offset, end)` of the page in a thread of `total` messages. */
function pageBounds(total: number, request: MessagePageRequest): [number, number] {
  const end = Math.min(request.before ?? total, total);
  const offset = request.limit === undefined ? 0 : Math.max(0, end - request.limit);
  return [offset, end];
}

/** The `seq` ranges holding list positions `[start, end)`, given the list's ranges (half-open pairs, in list order). */
export function rangesBetween(ranges: readonly number[], start: number, end: number): number[] {
  const out: number[] = [];
  let position = 0;
  for (let k = 0; k < ranges.length && position < end; k += 2) {
    const from = ranges[k] as number;
    const length = (ranges[k + 1] as number) - from;
    const lo = Math.max(start, position);
    const hi = Math.min(end, position + length);
    if (lo < hi) out.push(from + (lo - position), from + (hi - position));
    position += length;
  }
  return out;
}
