/**
 * The delta form of `values` frames: state → patch (`diffValues`), patch + base → state (`applyValuesPatch`), and
 * one frame of either form onto a client's state (`applyValuesFrame`). Pure and dependency-free, so a browser
 * bundle or a protocol plugin can import it (`@antler/plugin-gateway/values-delta`). The wire form is documented
 * in the gateway's README ("`values` frames are deltas").
 */

/** A serialized message as `values` frames carry it (`type`, `id`, `content`, ...); the projection reads only `id`. */
export interface ValuesMessage {
  readonly type?: string;
  readonly id?: string | undefined;
}

/** A thread's values: `messages` plus other top-level keys (title, artifacts, todos, ...). */
export interface ValuesState {
  readonly messages?: readonly ValuesMessage[];
  readonly [key: string]: unknown;
}

/** One step of rebuilding a message list from the previous one. */
export type MessagesOp = { readonly keep: number } | { readonly drop: number } | { readonly add: readonly ValuesMessage[] };

export interface MessagesPatch {
  /** How many messages the list it applies to holds. */
  readonly base: number;
  /** `keep` and `drop` counts add up to `base`. */
  readonly ops: readonly MessagesOp[];
}

export interface ValuesPatch {
  /** Top-level keys (not `messages`) whose value changed, with the new value. */
  readonly set?: Readonly<Record<string, unknown>>;
  /** Top-level keys that are gone. */
  readonly unset?: readonly string[];
  readonly messages?: MessagesPatch;
}

/** The `data` of a `values` frame. */
export type ValuesFrame = { readonly patch: ValuesPatch } | { readonly snapshot: ValuesState };

export const VALUES_PATCH_MISMATCH = "ANTLER_ERR_VALUES_PATCH_MISMATCH";

/** A patch that does not fit the state it is applied to: the client holds another base than the stream's. */
export class ValuesPatchMismatchError extends Error {
  readonly code = VALUES_PATCH_MISMATCH;
  constructor(message: string) {
    super(`${message}. Join the run's stream again (its first values frame is a snapshot), or reload the thread's state.`);
    this.name = "ValuesPatchMismatchError";
  }
}

/** Deep equality of JSON values (what JSON.stringify would print the same), without printing them. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], other[i])) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  // Keys whose value is undefined are not printed by JSON.stringify, so they do not count.
  let count = 0;
  for (const key in left) {
    if (left[key] === undefined) continue;
    count++;
    if (!sameJson(left[key], right[key])) return false;
  }
  for (const key in right) if (right[key] !== undefined) count--;
  return count === 0;
}

/** Appends an op, merging it into the last one when they are of one kind. */
function push(ops: MessagesOp[], op: MessagesOp): void {
  const last = ops.at(-1);
  if (last && "keep" in last && "keep" in op) ops[ops.length - 1] = { keep: last.keep + op.keep };
  else if (last && "drop" in last && "drop" in op) ops[ops.length - 1] = { drop: last.drop + op.drop };
  else if (last && "add" in last && "add" in op) ops[ops.length - 1] = { add: [...last.add, ...op.add] };
  else ops.push(op);
}

/**
 * The ops that turn `previous` into `next`. Messages are matched by id in order: an equal message is kept, one
 * whose id stayed but whose content changed is dropped and added in place, one that is gone is dropped, a new
 * one is added. Linear in the two lists; an append costs one `keep` and one `add`.
 */
export function diffMessages(previous: readonly ValuesMessage[], next: readonly ValuesMessage[]): MessagesPatch {
  const ops: MessagesOp[] = [];
  // The same objects at the start (the usual case: a step appends to the list it was given) are kept without
  // comparing or indexing them; the loop below would keep them one by one.
  let i = 0;
  while (i < previous.length && i < next.length && previous[i] === next[i]) i++;
  if (i > 0) ops.push({ keep: i });
  let j = i;
  // Only positions from `j` on are looked up, and an id's last index there is its last index in `next`.
  const lastIndexInNext = new Map<string, number>();
  for (let index = j; index < next.length; index++) {
    const id = (next[index] as ValuesMessage).id;
    if (id !== undefined) lastIndexInNext.set(id, index);
  }
  while (i < previous.length && j < next.length) {
    const old = previous[i] as ValuesMessage;
    const now = next[j] as ValuesMessage;
    if (sameJson(old, now)) {
      push(ops, { keep: 1 });
      i++;
      j++;
    } else if (old.id !== undefined && old.id === now.id) {
      push(ops, { drop: 1 });
      push(ops, { add: [now] });
      i++;
      j++;
    } else if (old.id === undefined || (lastIndexInNext.get(old.id) ?? -1) < j) {
      // Not found further on in `next`: gone.
      push(ops, { drop: 1 });
      i++;
    } else {
      push(ops, { add: [now] });
      j++;
    }
  }
  if (i < previous.length) push(ops, { drop: previous.length - i });
  if (j < next.length) push(ops, { add: next.slice(j) });
  return { base: previous.length, ops };
}

/** True when the ops leave the list as it was. */
function unchanged(patch: MessagesPatch): boolean {
  return patch.ops.every((op) => "keep" in op);
}

/** What changed from `previous` to `next`: changed top-level keys in `set`, the message list as ops. */
export function diffValues(previous: ValuesState, next: ValuesState): ValuesPatch {
  const set: Record<string, unknown> = {};
  const unset: string[] = [];
  for (const key of Object.keys(next)) {
    if (key === "messages" || next[key] === undefined) continue;
    if (!(key in previous) || previous[key] === undefined || !sameJson(previous[key], next[key])) set[key] = next[key];
  }
  for (const key of Object.keys(previous)) {
    if (key !== "messages" && previous[key] !== undefined && next[key] === undefined) unset.push(key);
  }
  const patch: { set?: Record<string, unknown>; unset?: string[]; messages?: MessagesPatch } = {};
  if (Object.keys(set).length > 0) patch.set = set;
  if (unset.length > 0) patch.unset = unset;
  if (next.messages !== undefined || previous.messages !== undefined) {
    const messages = diffMessages(previous.messages ?? [], next.messages ?? []);
    if (!unchanged(messages)) patch.messages = messages;
  }
  return patch;
}

/** Rebuilds a message list from `base` and the ops; throws `ValuesPatchMismatchError` when they do not fit. */
export function applyMessagesPatch(base: readonly ValuesMessage[], patch: MessagesPatch): ValuesMessage[] {
  if (patch.base !== base.length) {
    throw new ValuesPatchMismatchError(`the messages patch applies to ${patch.base} messages, the state holds ${base.length}`);
  }
  const out: ValuesMessage[] = [];
  let at = 0;
  for (const op of patch.ops) {
    if ("add" in op) {
      out.push(...op.add);
      continue;
    }
    const count = "keep" in op ? op.keep : op.drop;
    if (!Number.isInteger(count) || count < 0 || at + count > base.length) {
      throw new ValuesPatchMismatchError(`a messages op covers messages ${at}–${at + count} of ${base.length}`);
    }
    if ("keep" in op) for (let k = at; k < at + count; k++) out.push(base[k] as ValuesMessage);
    at += count;
  }
  if (at !== base.length) throw new ValuesPatchMismatchError(`the messages ops cover ${at} of ${base.length} messages`);
  return out;
}

/** The state after `patch`; `base` is not changed. */
export function applyValuesPatch(base: ValuesState, patch: ValuesPatch): ValuesState {
  const out: Record<string, unknown> = { ...base };
  for (const key of patch.unset ?? []) delete out[key];
  if (patch.set) Object.assign(out, patch.set);
  if (patch.messages) out.messages = applyMessagesPatch(base.messages ?? [], patch.messages);
  return out;
}

/** Is this `values` frame data a snapshot or a patch (and not an old-style whole state)? */
export function isValuesFrame(data: unknown): data is ValuesFrame {
  if (!data || typeof data !== "object") return false;
  const keys = Object.keys(data);
  return keys.length === 1 && (keys[0] === "patch" || keys[0] === "snapshot");
}

/**
 * One `values` frame onto a client's state: a snapshot replaces it, a patch applies to it. A patch with no
 * state to apply to starts from an empty one (its `messages.base` must then be 0).
 */
export function applyValuesFrame(state: ValuesState | undefined, frame: ValuesFrame): ValuesState {
  if ("snapshot" in frame) return frame.snapshot;
  return applyValuesPatch(state ?? {}, frame.patch);
}
