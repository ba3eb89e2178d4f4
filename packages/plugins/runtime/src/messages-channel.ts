import { BaseMessageChunk, isBaseMessage, RemoveMessage } from "@langchain/core/messages";
import { v4 as uuid4 } from "@langchain/core/utils/uuid";
import { messagesStateReducer } from "@langchain/langgraph";
import { type BaseChannel, BinaryOperatorAggregate } from "@langchain/langgraph/channels";

type Messages = unknown[];

/**
 * Where each id of a messages list is: `at.get(id)` is a position holding a message with that id. Lists made by
 * appending to a list share its map (they share its items as a prefix), so an id is in a list exactly when its
 * recorded position is inside the list and holds that id. Entries are never overwritten: an append that would
 * put a known id at another position gives the new list a map of its own.
 */
interface IdIndex {
  readonly at: Map<unknown, number>;
  readonly length: number;
  readonly last: unknown;
}

type PlainMessage = { id?: unknown; lc_kwargs: Record<string, unknown> };

function isPlainMessage(value: unknown): value is PlainMessage {
  // What LangGraph's reducer keeps as it is: a message object that is not a chunk. Anything else (a dict, a
  // string, a chunk) it converts into a new object.
  return isBaseMessage(value) && !isChunk(value);
}

/**
 * Whether `value` may be a chunk. `BaseMessageChunk.isInstance` holds only for objects whose prototype chain has
 * `BaseMessageChunk.prototype`, so where this is false it is false too; where this is true, the stock reducer
 * handles the item (converting it if it is a chunk). This native check costs a tenth of `isInstance`.
 */
function isChunk(value: object): boolean {
  return Object.prototype.isPrototypeOf.call(BaseMessageChunk.prototype, value);
}

/**
 * The id indexes of the lists one reducer has seen, keyed by the list array itself, so an index lives exactly as
 * long as its list. `length` and `last` catch a list changed in place (a `push` by a hook): its index is then
 * rebuilt.
 */
class ListIndexes {
  private readonly byList = new WeakMap<readonly unknown[], IdIndex>();

  /** The id index of `list`, or undefined when the reducer would change some item of it (so the fast path is off). */
  of(list: readonly unknown[]): IdIndex | undefined {
    const known = this.byList.get(list);
    if (known && known.length === list.length && known.last === list[list.length - 1]) return known;
    const at = new Map<unknown, number>();
    for (let i = 0; i < list.length; i++) {
      const m = list[i];
      if (!isPlainMessage(m) || m.id === null || m.id === undefined) return undefined;
      if (!at.has(m.id)) at.set(m.id, i);
    }
    return this.record(list, at);
  }

  record(list: readonly unknown[], at: Map<unknown, number>): IdIndex {
    const index: IdIndex = { at, length: list.length, last: list[list.length - 1] };
    this.byList.set(list, index);
    return index;
  }

  /** `list` (a result of the stock reducer, or a list needing a map of its own) with a fresh index. */
  fresh(list: Messages): Messages {
    if (Array.isArray(list)) {
      this.byList.delete(list);
      this.of(list);
    }
    return list;
  }
}

function holds(list: readonly unknown[], index: IdIndex, id: unknown): boolean {
  const i = index.at.get(id);
  return i !== undefined && i < list.length && (list[i] as PlainMessage).id === id;
}

/**
 * A reducer that is LangGraph's `messagesStateReducer` with a fast path for the write a step nearly always makes: new messages
 * appended. The stock reducer converts every message of the thread and rebuilds an id map on each write, so a
 * turn cost grew with the thread (about 30 ms a turn at 5,000 messages). Here, when the current list is all
 * message objects with ids and the update is only message objects or chunks (no dicts, no `RemoveMessage`) whose
 * ids are new, the result is the list with the update appended, found with a map lookup per new message. Chunks
 * are converted and missing ids get a uuid by the stock reducer itself, applied to the chunk alone. Every other
 * write (a replacement by id, a removal, dicts, a repeated id) goes to the stock reducer, so the result is the
 * same in every case.
 *
 * Invariant relied on: messages in state are not re-identified in place (`message.id = ...` on a message already
 * in the list); the stock reducer replaces a message by writing a new one with the same id, which is the way.
 */
export function createAppendingMessagesReducer(): (left: unknown, right: unknown) => Messages {
  const indexes = new ListIndexes();
  return function appendingMessagesReducer(left: unknown, right: unknown): Messages {
    const index = Array.isArray(left) ? indexes.of(left) : undefined;
    const update = index && newMessages(left as unknown[], index, Array.isArray(right) ? right : [right]);
    if (!index || !update) return indexes.fresh(messagesStateReducer(left as never, right as never) as Messages);
    for (const m of update) {
      if (m.id === null || m.id === undefined) {
        m.id = uuid4();
        m.lc_kwargs.id = m.id;
      }
    }
    const merged = (left as unknown[]).concat(update);
    const at = index.at;
    for (let i = (left as unknown[]).length; i < merged.length; i++) {
      const id = (merged[i] as PlainMessage).id;
      const recorded = at.get(id);
      if (recorded === undefined) at.set(id, i);
      else if (recorded !== i) {
        // Another list appended this id elsewhere (a fork of the thread, say): this list gets its own map rather
        // than overwrite the other's entry.
        return indexes.fresh(merged);
      }
    }
    indexes.record(merged, at);
    return merged;
  };
}

/**
 * The update as the stock reducer would append it (chunks converted), when every item is a message object or
 * chunk, none a removal, and no id is in `list` or repeated; otherwise undefined.
 */
function newMessages(list: readonly unknown[], index: IdIndex, update: readonly unknown[]): PlainMessage[] | undefined {
  const out: PlainMessage[] = [];
  const inUpdate = new Set<unknown>();
  for (const item of update) {
    if (!isBaseMessage(item) || RemoveMessage.isInstance(item)) return undefined;
    // The stock conversion of a chunk (to its non-chunk class, with an id), on the chunk alone.
    const m = (isChunk(item) ? messagesStateReducer([], [item])[0] : item) as unknown as PlainMessage;
    if (m.id !== null && m.id !== undefined) {
      if (holds(list, index, m.id) || inUpdate.has(m.id)) return undefined;
      inUpdate.add(m.id);
    }
    out.push(m);
  }
  return out;
}

/**
 * The compiled graph's `messages` channel with an appending reducer (`createAppendingMessagesReducer`, one per
 * channel, with its own indexes) in place of LangGraph's reducer, when
 * it is LangGraph's stock messages channel; anything else (another reducer, another channel class) is left alone.
 */
export function appendingMessagesChannel(channel: BaseChannel): BaseChannel | undefined {
  if (channel.constructor !== BinaryOperatorAggregate) return undefined;
  const binop = channel as BinaryOperatorAggregate<unknown, unknown>;
  if (binop.operator !== (messagesStateReducer as unknown)) return undefined;
  return new BinaryOperatorAggregate(createAppendingMessagesReducer() as never, binop.initialValueFactory);
}
