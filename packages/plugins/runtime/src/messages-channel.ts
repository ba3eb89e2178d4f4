import { BaseMessageChunk, isBaseMessage, RemoveMessage } from "@langchain/core/messages";
import { v4 as uuid4 } from "@langchain/core/utils/uuid";
import { messagesStateReducer } from "@langchain/langgraph";
import { type BaseChannel, BinaryOperatorAggregate } from "@langchain/langgraph/channels";

type Messages = unknown[];

/**
 * The ids of a messages list this module returned or checked, and how the list looked then. `ids` holds at least
 * the ids of the list (a list and the lists appended to it share one set, so it may hold more): an id missing
 * from it is missing from the list, and an id found in it sends the write to LangGraph's reducer, which decides.
 */
interface IdIndex {
  readonly ids: Set<unknown>;
  readonly length: number;
  readonly last: unknown;
}

/**
 * Keyed by the list array itself, so an index lives exactly as long as its list. `length` and `last` catch a list
 * changed in place (a `push` by a hook): its index is then rebuilt.
 */
const indexes = new WeakMap<readonly unknown[], IdIndex>();

function isPlainMessage(value: unknown): value is { id?: unknown; lc_kwargs: Record<string, unknown> } {
  // What LangGraph's reducer keeps as it is: a message object that is not a chunk. Anything else (a dict, a
  // string, a chunk) it converts into a new object, so such a write takes its path.
  return isBaseMessage(value) && !BaseMessageChunk.isInstance(value);
}

/** The id index of `list`, or undefined when the reducer would change some item of it (so the fast path is off). */
function indexOf(list: readonly unknown[]): IdIndex | undefined {
  const known = indexes.get(list);
  if (known && known.length === list.length && known.last === list[list.length - 1]) return known;
  const ids = new Set<unknown>();
  for (const m of list) {
    if (!isPlainMessage(m) || m.id === null || m.id === undefined) return undefined;
    ids.add(m.id);
  }
  const index: IdIndex = { ids, length: list.length, last: list[list.length - 1] };
  indexes.set(list, index);
  return index;
}

/**
 * LangGraph's `messagesStateReducer` with a fast path for the write a step nearly always makes: new messages
 * appended. The stock reducer converts every message of the thread and rebuilds an id map on each write, so a
 * turn cost grew with the thread (about 30 ms a turn at 5,000 messages). Here, when the current list is all
 * message objects with ids and the update is only message objects (no chunks, no `RemoveMessage`) whose ids are
 * new, the result is the list with the update appended, found with a set lookup per new message. Missing ids get
 * a uuid as the stock reducer gives them. Every other write (a replacement by id, a removal, dicts, chunks, a
 * repeated id) goes to the stock reducer, so the result is the same in every case.
 *
 * Invariant relied on: messages in state are not re-identified in place (`message.id = ...` on a message already
 * in the list); the stock reducer replaces a message by writing a new one with the same id, which is the way.
 */
export function appendingMessagesReducer(left: unknown, right: unknown): Messages {
  const update = Array.isArray(right) ? right : [right];
  const index = Array.isArray(left) ? indexOf(left) : undefined;
  if (!index || !onlyNewMessages(update, index.ids)) return remember(messagesStateReducer(left as never, right as never) as Messages);
  for (const m of update as Array<{ id?: unknown; lc_kwargs: Record<string, unknown> }>) {
    if (m.id === null || m.id === undefined) {
      m.id = uuid4();
      m.lc_kwargs.id = m.id;
    }
    index.ids.add(m.id);
  }
  const merged = (left as unknown[]).concat(update);
  indexes.set(merged, { ids: index.ids, length: merged.length, last: merged[merged.length - 1] });
  return merged;
}

/** Whether every item of `update` is a message object (not a chunk, not a removal) whose id, if any, is new. */
function onlyNewMessages(update: readonly unknown[], ids: ReadonlySet<unknown>): boolean {
  const inUpdate = new Set<unknown>();
  for (const m of update) {
    if (!isPlainMessage(m) || RemoveMessage.isInstance(m)) return false;
    if (m.id === null || m.id === undefined) continue;
    if (ids.has(m.id) || inUpdate.has(m.id)) return false;
    inUpdate.add(m.id);
  }
  return true;
}

function remember(list: Messages): Messages {
  if (Array.isArray(list)) indexOf(list);
  return list;
}

/**
 * The compiled graph's `messages` channel with `appendingMessagesReducer` in place of LangGraph's reducer, when
 * it is LangGraph's stock messages channel; anything else (another reducer, another channel class) is left alone.
 */
export function appendingMessagesChannel(channel: BaseChannel): BaseChannel | undefined {
  if (channel.constructor !== BinaryOperatorAggregate) return undefined;
  const binop = channel as BinaryOperatorAggregate<unknown, unknown>;
  if (binop.operator !== (messagesStateReducer as unknown)) return undefined;
  return new BinaryOperatorAggregate(appendingMessagesReducer as never, binop.initialValueFactory);
}
