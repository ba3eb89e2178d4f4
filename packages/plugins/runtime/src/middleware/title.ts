import { AntlerError, ErrorCodes, type Logger, type MiddlewareSpec } from "@antler/kernel";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";

export interface TitleOptions {
  /** Model that writes the title. Without one (or when it fails), the title comes from the first user message. */
  model?: BaseChatModel | undefined;
  /** Default 6. */
  maxWords?: number | undefined;
  /** Default 60. */
  maxChars?: number | undefined;
  /** Where a failed title call is reported (error type only). */
  logger?: Pick<Logger, "warn"> | undefined;
}

/** The title when neither the model nor the first message gives one (an image-only message, say). */
export const FALLBACK_TITLE = "New conversation";

// How much of the exchange the title model reads; the opening of each side says what the thread is about.
const MAX_EXCERPT_CHARS = 1000;

const QUOTES = `"'\`“”‘’«»„`;
// Wrappers models put around a title, in any nesting: Markdown headings and emphasis, quotes, a "Title:" label.
const LEADING_NOISE = new RegExp(`^(?:#+\\s*|[*_]+|[${QUOTES}]+|title\\s*[:：]\\s*)`, "iu");
const TRAILING_NOISE = new RegExp(`(?:[*_]+|[${QUOTES}]+|[\\s.!?,;:…。！？、]+)$`, "u");

function stripNoise(text: string): string {
  let current = text.trim();
  for (let previous = ""; previous !== current; ) {
    previous = current;
    current = current.replace(LEADING_NOISE, "").replace(TRAILING_NOISE, "").trim();
  }
  return current;
}

/**
 * A title from free text: its first non-empty line, without a `Title:` label, Markdown markers, quotes
 * and trailing punctuation, cut to `maxWords` words and then to `maxChars` characters at a word boundary.
 * Returns "" when nothing is left.
 */
export function cleanTitle(raw: string, maxWords: number, maxChars: number): string {
  const line = raw.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  let text = stripNoise(line.replace(/\s+/g, " "));
  text = text.split(" ").slice(0, maxWords).join(" ");
  if (text.length > maxChars) {
    const cut = text.slice(0, maxChars + 1);
    const space = cut.lastIndexOf(" ");
    text = space > 0 ? cut.slice(0, space) : text.slice(0, maxChars);
  }
  return stripNoise(text);
}

/** The user's own words: blocks the harness injects into a message (`<system-reminder>…</system-reminder>`) are not. */
function userWords(message: HumanMessage): string {
  return message.text.replace(/<([A-Za-z][\w-]*)\b[^>]*>[\s\S]*?<\/\1>/g, " ").trim();
}

/** The title from the first user message, used without a model or when the model gives nothing usable. */
export function fallbackTitle(firstMessage: string, maxWords: number, maxChars: number): string {
  return cleanTitle(firstMessage.replace(/\s+/g, " "), maxWords, maxChars) || FALLBACK_TITLE;
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, `title.${name} must be a whole number ≥ 1, got ${String(value)}`, {
      where: `title.${name}`,
    });
  }
  return value;
}

/**
 * Names the thread after its first complete exchange (a user message answered by a final assistant message
 * without tool calls) and never renames it afterwards. Runs in `afterAgent`, so at most once per turn and
 * never in the middle of a tool loop.
 */
export function titleMiddleware(options: TitleOptions = {}): MiddlewareSpec {
  const maxWords = positive("maxWords", options.maxWords ?? 6);
  const maxChars = positive("maxChars", options.maxChars ?? 60);
  const { model, logger } = options;

  async function titleFromModel(question: string, answer: string, signal: AbortSignal | undefined): Promise<string> {
    if (!model) return "";
    const instructions =
      `Write a title for the conversation below: at most ${maxWords} words, in the language of the user's message. ` +
      "Reply with the title only, without quotes or trailing punctuation.";
    const exchange = `User: ${question.slice(0, MAX_EXCERPT_CHARS)}\n\nAssistant: ${answer.slice(0, MAX_EXCERPT_CHARS)}`;
    // "nostream": the title call is bookkeeping and must not show up in the run's streamed messages.
    const reply = await model.invoke([new SystemMessage(instructions), new HumanMessage(exchange)], {
      tags: ["nostream"],
      ...(signal ? { signal } : {}),
    });
    return cleanTitle(reply.text, maxWords, maxChars);
  }

  return {
    name: "Title",
    async afterAgent(state, runtime) {
      if (typeof state.title === "string" && state.title.trim() !== "") return undefined;
      const first = state.messages.find((m): m is HumanMessage => HumanMessage.isInstance(m));
      const last = state.messages.at(-1);
      // A turn that ended on a tool result or a tool call (clarification, interrupt) has no answer yet.
      if (!first || !last || !AIMessage.isInstance(last) || (last.tool_calls?.length ?? 0) > 0) return undefined;
      const question = userWords(first);
      // The model just failed on this turn (LLMErrorHandling's fallback answer): don't call it again for a title.
      const modelFailed = last.additional_kwargs?.antler_error_fallback === true;
      let title = "";
      if (!modelFailed) {
        try {
          title = await titleFromModel(question, last.text, runtime.signal);
        } catch (err) {
          if (runtime.signal?.aborted) throw err;
          logger?.warn(
            { middleware: "Title", error_type: err instanceof Error ? err.name : typeof err },
            "title model failed; using the first message",
          );
        }
      }
      return { title: title || fallbackTitle(question, maxWords, maxChars) };
    },
  };
}
