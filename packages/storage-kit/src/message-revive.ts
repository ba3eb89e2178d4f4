import {
  AIMessage,
  AIMessageChunk,
  ChatMessage,
  ChatMessageChunk,
  FunctionMessage,
  FunctionMessageChunk,
  HumanMessage,
  HumanMessageChunk,
  RemoveMessage,
  SystemMessage,
  SystemMessageChunk,
  ToolMessage,
  ToolMessageChunk,
} from "@langchain/core/messages";
import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";

type MessageClass = new (fields: Record<string, unknown>) => unknown;

/** The message classes a stored message row may name, as `["langchain_core", "messages", <name>]`. */
const CLASSES: Readonly<Record<string, MessageClass>> = {
  AIMessage,
  AIMessageChunk,
  ChatMessage,
  ChatMessageChunk,
  FunctionMessage,
  FunctionMessageChunk,
  HumanMessage,
  HumanMessageChunk,
  RemoveMessage,
  SystemMessage,
  SystemMessageChunk,
  ToolMessage,
  ToolMessageChunk,
} as unknown as Record<string, MessageClass>;

/** Deeper than this, `@langchain/core`'s `load` may refuse the row (its depth limit is 50): the serializer decides. */
const MAX_DEPTH = 40;

/**
 * Whether the stock serializer reads rows of `serde` (LangGraph's `JsonPlusSerializer` itself, not a subclass or
 * another serializer), so `MessageRowReviver` gives what it would.
 */
export function revivesLikeSerde(serde: SerializerProtocol): boolean {
  return serde.constructor === JsonPlusSerializer;
}

/**
 * Turns stored message rows (`serde.dumpsTyped(message)`, type `json`) back into their messages, as
 * `JsonPlusSerializer.loadsTyped` does, without its reviver and `@langchain/core`'s `load`: both walk every value
 * asynchronously, and decoding a thread's messages cost tens of milliseconds per thousand that way. A message is
 * built by its own constructor from the stored kwargs, as `load` builds it.
 *
 * Only the plain case is taken: a known message class, kwargs whose keys `load` passes on unchanged, and values
 * that are plain JSON, with no object carrying `lc` or `__lc_escaped__` (serialized objects, secrets, escaped
 * user data, `undefined` markers), no `__proto__` key and no `-0`. For anything else `revive` returns undefined,
 * and the caller asks the serializer.
 */
export class MessageRowReviver {
  /** Per class, its `lc_aliases` along the prototype chain, inverted (stored key -> constructor field). */
  private readonly aliases = new Map<MessageClass, Readonly<Record<string, string>>>();

  revive(text: string): unknown {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (!isRecord(value) || value.lc !== 1 || value.type !== "constructor" || "__lc_escaped__" in value) return undefined;
    const id = value.id;
    if (!Array.isArray(id) || id.length !== 3 || id[0] !== "langchain_core" || id[1] !== "messages") return undefined;
    const name = id[2];
    if (typeof name !== "string" || !Object.hasOwn(CLASSES, name)) return undefined;
    const MessageType = CLASSES[name] as MessageClass;
    const kwargs = value.kwargs;
    if (!isRecord(kwargs)) return undefined;
    const aliases = this.aliasesOf(MessageType);
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(kwargs)) {
      // `load` renames a key through the class's aliases, else to camelCase: a key with no separator stays itself.
      const field = Object.hasOwn(aliases, key) ? (aliases[key] as string) : PLAIN_KEY.test(key) ? key : undefined;
      if (field === undefined || !isPlainJson(kwargs[key], 1)) return undefined;
      fields[field] = kwargs[key];
    }
    return new MessageType(fields);
  }

  private aliasesOf(type: MessageClass): Readonly<Record<string, string>> {
    let inverted = this.aliases.get(type);
    if (!inverted) {
      const aliases: Record<string, string> = {};
      for (let current: unknown = type; typeof current === "function" && current.prototype; current = Object.getPrototypeOf(current)) {
        Object.assign(aliases, Reflect.get(current.prototype as object, "lc_aliases"));
      }
      const out: Record<string, string> = {};
      for (const [field, stored] of Object.entries(aliases)) out[stored] = field;
      inverted = out;
      this.aliases.set(type, inverted);
    }
    return inverted;
  }
}

const PLAIN_KEY = /^[A-Za-z0-9]+$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** JSON that both revivers copy as it is. */
function isPlainJson(value: unknown, depth: number): boolean {
  if (typeof value === "number") return !Object.is(value, -0);
  if (typeof value !== "object" || value === null) return true;
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isPlainJson(item, depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    if (key === "lc" || key === "__lc_escaped__" || key === "__proto__") return false;
    if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}
