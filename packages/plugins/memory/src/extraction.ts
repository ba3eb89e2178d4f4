import { z } from "zod";
import { FACT_CATEGORIES } from "./config.js";
import type { MemoryFact, MemoryHistory, MemoryProfile } from "./store.js";

/** One message of a conversation, as extraction reads it. */
export interface TranscriptMessage {
  id: string;
  role: "user" | "assistant";
  text: string;
}

const field = z.string().max(4000);

/**
 * What the extraction model must reply with (validated; anything else is a malformed reply that changes nothing).
 * Omitted profile and history fields stay as they are; `add`, `update` and `remove` change facts.
 */
export const extractionReplySchema = z.object({
  profile: z.object({ work_context: field.optional(), personal_context: field.optional(), top_of_mind: field.optional() }).optional(),
  history: z
    .object({ recent_months: field.optional(), earlier_context: field.optional(), long_term_background: field.optional() })
    .optional(),
  add: z
    .array(
      z.object({
        content: z.string().trim().min(1).max(2000),
        category: z.enum(FACT_CATEGORIES),
        confidence: z.number().min(0).max(1),
      }),
    )
    .max(50)
    .default([]),
  update: z
    .array(
      z.object({
        id: z.string().min(1),
        content: z.string().trim().min(1).max(2000).optional(),
        category: z.enum(FACT_CATEGORIES).optional(),
        confidence: z.number().min(0).max(1).optional(),
      }),
    )
    .max(50)
    .default([]),
  remove: z.array(z.string().min(1)).max(50).default([]),
});

export type ExtractionReply = z.output<typeof extractionReplySchema>;

export const EXTRACTION_INSTRUCTIONS = `You maintain an assistant's long-term memory of one user. Read the conversation excerpt and the current memory, then reply with ONE JSON object and nothing else:
{
  "profile": {"work_context": "...", "personal_context": "...", "top_of_mind": "..."},
  "history": {"recent_months": "...", "earlier_context": "...", "long_term_background": "..."},
  "add": [{"content": "...", "category": "preference|knowledge|context|behavior|goal", "confidence": 0.0-1.0}],
  "update": [{"id": "<existing fact id>", "content": "...", "category": "...", "confidence": 0.0-1.0}],
  "remove": ["<existing fact id>"]
}
Rules:
- Only durable facts about the user (preferences, background, goals, ongoing work); not the task's content, not small talk.
- One short, self-contained sentence per fact, in the user's language. Do not repeat a fact that is already in memory; update it instead when it changed, remove it when the user contradicts or retracts it.
- Never record secrets: passwords, API keys, tokens, credentials.
- Omit profile or history fields that did not change. Use empty arrays when nothing changes.`;

/** The extraction request: instructions, the memory as it is, and the new part of the conversation. */
export function extractionPrompt(input: {
  profile: MemoryProfile;
  history: MemoryHistory;
  facts: readonly MemoryFact[];
  transcript: readonly TranscriptMessage[];
}): string {
  const memory = {
    profile: input.profile,
    history: input.history,
    facts: input.facts.map((f) => ({ id: f.id, content: f.content, category: f.category, confidence: f.confidence })),
  };
  const conversation = input.transcript.map((m) => `${m.role === "user" ? "User" : "Assistant"}: ${m.text}`).join("\n\n");
  return `<current_memory>\n${JSON.stringify(memory, null, 1)}\n</current_memory>\n\n<conversation>\n${conversation}\n</conversation>`;
}

/** Why a reply was refused, for the log. */
export class MalformedExtractionReply extends Error {
  override readonly name = "MalformedExtractionReply";
}

/**
 * Parses the model's reply: the JSON object in it (a Markdown code fence or prose around it is tolerated),
 * validated against `extractionReplySchema`. Throws `MalformedExtractionReply` saying what was wrong.
 */
export function parseExtractionReply(text: string): ExtractionReply {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)?.[1];
  const candidate = (fenced ?? text).trim();
  const start = candidate.indexOf("{");
  const end = candidate.lastIndexOf("}");
  if (start < 0 || end <= start) throw new MalformedExtractionReply("the reply holds no JSON object");
  let json: unknown;
  try {
    json = JSON.parse(candidate.slice(start, end + 1));
  } catch (err) {
    throw new MalformedExtractionReply(`the reply's JSON does not parse: ${(err as Error).message}`);
  }
  const parsed = extractionReplySchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
      .join("; ");
    throw new MalformedExtractionReply(`the reply does not match the memory update format: ${problems}`);
  }
  return parsed.data;
}
