import { EmptyChannelError } from "@langchain/langgraph";
import { type BaseChannel, BinaryOperatorAggregate, LastValue, UntrackedValueChannel } from "@langchain/langgraph/channels";
import { appendingMessagesChannel } from "./messages-channel.js";

/**
 * LangGraph leaves a channel out of a checkpoint when its `checkpoint()` throws `EmptyChannelError`. A fresh
 * error captures a stack trace each time; one error object thrown again and again costs next to nothing and is
 * caught the same way (by name).
 */
const UNSET = new EmptyChannelError("state field not set");

/**
 * An optional last-value field (`title`, `stop_reason`, ...). LangGraph's `LastValue` holds `undefined` as its
 * initial value, so every checkpoint stores an explicit `undefined` for it. Here an unset field (or one written
 * `undefined`) is left out of checkpoints. Reading it gives `undefined` as before: the whole state is read about
 * ten times per turn, and an empty-channel error per unset field and read (LangGraph's way of saying "absent")
 * cost more than the rest of the built-in middleware together.
 */
class SparseLastValue<V> extends LastValue<V> {
  constructor(initialValueFactory?: () => V) {
    super(initialValueFactory);
    if (this.value.length === 1 && this.value[0] === undefined) this.value = [];
  }
  override fromCheckpoint(checkpoint?: V): this {
    const channel = new SparseLastValue<V>(this.initialValueFactory);
    if (checkpoint !== undefined) channel.value = [checkpoint];
    return channel as this;
  }
  override get(): V {
    return this.value[0] as V;
  }
  override checkpoint(): V {
    if (this.value.length === 0 || this.value[0] === undefined) throw UNSET;
    return this.value[0] as V;
  }
}

/**
 * A reducer field (`artifacts`, `todos`, ...): the same reducer; unset, it reads as `undefined` instead of throwing.
 *
 * It must not call itself `BinaryOperatorAggregate`: LangGraph takes a channel of that name that has a version but
 * no stored value for one written as a `DeltaChannel`, and rebuilds it by walking every ancestor checkpoint of the
 * thread (one read and deserialization each). A sparse field that was written `undefined` is exactly that, so every
 * turn's start walked the thread's whole history.
 */
class SparseReducedValue<V, U> extends BinaryOperatorAggregate<V, U> {
  override lc_graph_name = "SparseReducedValue";
  override equals(other: BaseChannel): boolean {
    return other instanceof SparseReducedValue && other.operator === this.operator;
  }
  override fromCheckpoint(checkpoint?: V): this {
    const channel = new SparseReducedValue<V, U>(this.operator, this.initialValueFactory);
    channel.value = super.fromCheckpoint(checkpoint).value;
    return channel as this;
  }
  override get(): V {
    return this.value as V;
  }
  override checkpoint(): V {
    if (this.value === undefined) throw UNSET;
    return this.value;
  }
}

/**
 * LangChain's untracked fields (`jumpTo`, `structuredResponse`): never restored from a checkpoint, yet the stock
 * channel writes an explicit `undefined` for them into every one. Here they are left out, and read as `undefined`
 * when unset.
 */
class SparseUntrackedValue<V> extends UntrackedValueChannel<V> {
  override fromCheckpoint(_checkpoint?: undefined): this {
    const self = this as unknown as { initialValueFactory?: () => V };
    return new SparseUntrackedValue<V>({
      guard: this.guard,
      ...(self.initialValueFactory ? { initialValueFactory: self.initialValueFactory } : {}),
    }) as this;
  }
  override get(): V {
    return this.isAvailable() ? super.get() : (undefined as V);
  }
  override checkpoint(): undefined {
    throw UNSET;
  }
}

function sparse(channel: BaseChannel): BaseChannel | undefined {
  // Exact classes only: a subclass (or a channel with a real default) keeps LangGraph's own behaviour.
  switch (channel.constructor) {
    case LastValue: {
      const factory = (channel as unknown as { initialValueFactory?: () => unknown }).initialValueFactory;
      if (factory && factory() !== undefined) return undefined;
      return new SparseLastValue(factory);
    }
    case BinaryOperatorAggregate: {
      const binop = channel as BinaryOperatorAggregate<unknown, unknown>;
      if (binop.initialValueFactory && binop.initialValueFactory() !== undefined) return undefined;
      return new SparseReducedValue(binop.operator, binop.initialValueFactory);
    }
    case UntrackedValueChannel: {
      const untracked = channel as UntrackedValueChannel<unknown>;
      if (untracked.isAvailable()) return undefined; // an initial value: keep the stock channel
      return new SparseUntrackedValue({ guard: untracked.guard });
    }
    default:
      return undefined;
  }
}

/**
 * Swaps the compiled graph's channels for the state fields (not `messages`) for sparse ones: an unset field costs
 * nothing in a checkpoint (instead of an explicit `undefined` in each) and nothing when the state is read
 * (instead of a fresh error per read for unset reducer and untracked fields). Hooks, tools and readers see the
 * same values: an unset field is `undefined`, a set one has its value. The `messages` channel gets a reducer
 * whose append costs the new messages, not the thread (`appendingMessagesReducer`), with the same results.
 */
export function useSparseChannels(graph: unknown): void {
  const channels = (graph as { channels?: Record<string, BaseChannel> }).channels;
  if (!channels) return;
  for (const [key, channel] of Object.entries(channels)) {
    if (key.startsWith("__") || key.includes(":")) continue;
    const replacement = key === "messages" ? appendingMessagesChannel(channel) : sparse(channel);
    if (replacement) channels[key] = replacement;
  }
}
