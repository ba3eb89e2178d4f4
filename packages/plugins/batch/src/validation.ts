import { z } from "zod";
import { BATCH_LIMITS } from "./config.js";
import { BatchErrorCodes, batchError } from "./errors.js";

export const BATCH_TASK_TOOL = "batch_task";
export const BATCH_STATUS_TOOL = "batch_status";
export const CANCEL_BATCH_TOOL = "cancel_batch";

// Limits are checked in code, not in the schema, so a refusal can name each offending item at once.
export const batchTaskSchema = z.object({
  title: z.string().describe("A short label for the batch, shown in status and progress output."),
  items: z
    .array(
      z.object({
        key: z.string().describe(`Your handle for the item, unique within the batch, 1–${BATCH_LIMITS.keyMaxChars} characters.`),
        prompt: z
          .string()
          .describe(`The complete task for one subagent, at most ${BATCH_LIMITS.promptMaxChars.toLocaleString("en-US")} characters.`),
        acceptance_criteria: z
          .array(z.string())
          .optional()
          .describe(
            `Up to ${BATCH_LIMITS.criteriaMaxItems} checks, each at most ${BATCH_LIMITS.criterionMaxChars} characters: file:<path> exists, file:<path> non-empty, file_written:<path>, tests_passed:<command>. Anything else is UNVERIFIED.`,
          ),
      }),
    )
    .describe("The items; each runs as its own subagent."),
  subagent_type: z.string().describe("The subagent type that runs every item (e.g. general-purpose)."),
  max_live_items: z
    .number()
    .int()
    .optional()
    .describe("Most items of this batch held by one worker process at once (queued for a slot or running)."),
  max_running_items: z.number().int().optional().describe("Most items of this batch running at once across all workers."),
});

export interface BatchItemInput {
  key: string;
  prompt: string;
  acceptance_criteria?: readonly string[] | null | undefined;
}

export interface BatchSubmission {
  title: string;
  subagent_type: string;
  items: readonly BatchItemInput[];
  max_live_items?: number | null | undefined;
  max_running_items?: number | null | undefined;
}

export interface NormalizedItem {
  readonly key: string;
  readonly prompt: string;
  readonly acceptanceCriteria: readonly string[];
}

export interface NormalizedSubmission {
  readonly title: string;
  readonly subagentType: string;
  readonly items: readonly NormalizedItem[];
  readonly maxLiveItems: number | null;
  readonly maxRunningItems: number | null;
}

export interface ValidationLimits {
  maxItems: number;
  /** When given, `subagent_type` must be one of these. */
  subagentTypes?: readonly string[] | undefined;
}

/** At most this many problems are listed in one error; the rest are counted. */
const MAX_LISTED_PROBLEMS = 10;

function describeItem(index: number, key: unknown): string {
  if (typeof key !== "string" || key.length === 0) return `items[${index}]`;
  const shown = key.length > 40 ? `${key.slice(0, 40)}…` : key;
  return `items[${index}] (key ${JSON.stringify(shown)})`;
}

function positiveIntOrNull(value: unknown, name: string, problems: string[]): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    problems.push(`${name} must be a positive integer (got ${JSON.stringify(value)})`);
    return null;
  }
  return value;
}

/**
 * Checks a submission against the limits and returns it normalized (trimmed title and criteria). Every problem
 * names the offending item by index and key, so a model can fix exactly those entries and resubmit.
 */
export function validateSubmission(input: BatchSubmission, limits: ValidationLimits): NormalizedSubmission {
  const problems: string[] = [];
  const title = typeof input.title === "string" ? input.title.trim() : "";
  if (title.length === 0) problems.push("title is empty; give the batch a short label");
  else if (title.length > BATCH_LIMITS.titleMaxChars) {
    problems.push(`title is ${title.length} characters; the limit is ${BATCH_LIMITS.titleMaxChars}`);
  }
  const subagentType = typeof input.subagent_type === "string" ? input.subagent_type.trim() : "";
  if (subagentType.length === 0) problems.push("subagent_type is empty");
  else if (limits.subagentTypes && !limits.subagentTypes.includes(subagentType)) {
    problems.push(`unknown subagent_type ${JSON.stringify(subagentType)}; available types: ${limits.subagentTypes.join(", ") || "(none)"}`);
  }
  const maxLiveItems = positiveIntOrNull(input.max_live_items, "max_live_items", problems);
  const maxRunningItems = positiveIntOrNull(input.max_running_items, "max_running_items", problems);

  const rawItems: readonly unknown[] = Array.isArray(input.items) ? input.items : [];
  if (!Array.isArray(input.items)) problems.push("items must be a list of { key, prompt, acceptance_criteria? }");
  else if (rawItems.length === 0) problems.push("items is empty; a batch needs at least one item");
  else if (rawItems.length > limits.maxItems) {
    problems.push(`items has ${rawItems.length} entries; the limit is ${limits.maxItems} per batch. Split the work into several batches.`);
  }

  const firstIndexOfKey = new Map<string, number>();
  const items: NormalizedItem[] = [];
  for (const [index, raw] of rawItems.entries()) {
    const item = (raw ?? {}) as Partial<BatchItemInput>;
    const where = describeItem(index, item.key);
    const key = item.key;
    if (typeof key !== "string" || key.length === 0) {
      problems.push(`${where}: key is missing or empty; keys are 1–${BATCH_LIMITS.keyMaxChars} characters`);
    } else if (key.length > BATCH_LIMITS.keyMaxChars) {
      problems.push(`${where}: key is ${key.length} characters; the limit is ${BATCH_LIMITS.keyMaxChars}`);
    } else if (firstIndexOfKey.has(key)) {
      problems.push(`${where}: duplicate key; items[${firstIndexOfKey.get(key)}] already uses it. Keys must be unique within a batch.`);
    } else {
      firstIndexOfKey.set(key, index);
    }
    const prompt = item.prompt;
    if (typeof prompt !== "string" || prompt.trim().length === 0) {
      problems.push(`${where}: prompt is missing or empty`);
    } else if (prompt.length > BATCH_LIMITS.promptMaxChars) {
      problems.push(
        `${where}: prompt is ${prompt.length.toLocaleString("en-US")} characters; the limit is ${BATCH_LIMITS.promptMaxChars.toLocaleString("en-US")}`,
      );
    }
    const criteria: string[] = [];
    const rawCriteria = item.acceptance_criteria;
    if (rawCriteria !== undefined && rawCriteria !== null) {
      if (!Array.isArray(rawCriteria)) {
        problems.push(`${where}: acceptance_criteria must be a list of strings`);
      } else {
        for (const [j, c] of rawCriteria.entries()) {
          if (typeof c !== "string") {
            problems.push(`${where}: acceptance_criteria[${j}] is not a string`);
            continue;
          }
          const trimmed = c.trim();
          if (trimmed.length === 0 || criteria.includes(trimmed)) continue;
          if (trimmed.length > BATCH_LIMITS.criterionMaxChars) {
            problems.push(
              `${where}: acceptance_criteria[${j}] is ${trimmed.length} characters; the limit is ${BATCH_LIMITS.criterionMaxChars}`,
            );
            continue;
          }
          criteria.push(trimmed);
        }
        if (criteria.length > BATCH_LIMITS.criteriaMaxItems) {
          problems.push(`${where}: ${criteria.length} acceptance criteria; the limit is ${BATCH_LIMITS.criteriaMaxItems}`);
        }
      }
    }
    if (typeof key === "string" && typeof prompt === "string") items.push({ key, prompt, acceptanceCriteria: criteria });
  }

  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((p) => `- ${p}`);
    if (problems.length > MAX_LISTED_PROBLEMS) listed.push(`- … and ${problems.length - MAX_LISTED_PROBLEMS} more`);
    throw batchError(BatchErrorCodes.INVALID, `the batch was not submitted (${problems.length} problem(s)):\n${listed.join("\n")}`, {
      hint: "Fix the listed entries and submit the whole batch again; nothing was stored.",
      details: { problems },
    });
  }
  return { title, subagentType, items, maxLiveItems, maxRunningItems };
}
