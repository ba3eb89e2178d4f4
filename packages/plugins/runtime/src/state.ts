import { AntlerError, type MiddlewareEntry, type StateField } from "@antler/kernel";
import { type CompiledPipeline, compilePipeline } from "@antler/kernel/pipeline";
import { ReducedValue } from "@langchain/langgraph";
import { z } from "zod";
import { runContextSchema } from "./context.js";
import { RuntimeErrorCodes } from "./errors.js";

/** Ordered, de-duplicated union: earlier entries keep their place, new ones are appended. */
export function mergeArtifacts(current: readonly string[] | undefined, update: readonly string[] | undefined): string[] {
  const out = [...(current ?? [])];
  const seen = new Set(out);
  for (const item of update ?? []) {
    if (!seen.has(item)) {
      seen.add(item);
      out.push(item);
    }
  }
  return out;
}

export interface ViewedImage {
  mime_type: string;
  size: number;
  [key: string]: unknown;
}

/** Merge by path; an empty object clears (the ViewImage middleware clears after the model has seen them). */
export function mergeViewedImages(
  current: Readonly<Record<string, ViewedImage>> | undefined,
  update: Readonly<Record<string, ViewedImage>> | undefined,
): Record<string, ViewedImage> {
  if (update === undefined) return { ...(current ?? {}) };
  if (Object.keys(update).length === 0) return {};
  return { ...(current ?? {}), ...update };
}

export interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

/** `null`/absent keeps the list; any list replaces it. */
export function mergeTodos(current: Todo[] | undefined, update: Todo[] | null | undefined): Todo[] | undefined {
  return update === undefined || update === null ? current : update;
}

export interface SandboxRef {
  sandbox_id?: string;
}

/** Idempotent: setting the same id again is fine, a different id for a thread that has one is a bug. */
export function mergeSandbox(current: SandboxRef | undefined, update: SandboxRef | null | undefined): SandboxRef | undefined {
  if (update === undefined) return current;
  if (update === null) return undefined;
  const a = current?.sandbox_id;
  const b = update.sandbox_id;
  if (a !== undefined && b !== undefined && a !== b) {
    throw new AntlerError(RuntimeErrorCodes.STATE_CONFLICT, `thread already holds sandbox "${a}"; refusing to replace it with "${b}"`, {
      where: "state.sandbox",
      hint: "Release the current sandbox (update sandbox to null) before acquiring another.",
    });
  }
  return { ...(current ?? {}), ...update };
}

const todoSchema = z.object({ content: z.string(), status: z.enum(["pending", "in_progress", "completed"]) });
const viewedImageSchema = z.object({ mime_type: z.string(), size: z.number() }).loose();

export const threadDataSchema = z.object({
  workspace_path: z.string().optional(),
  uploads_path: z.string().optional(),
  outputs_path: z.string().optional(),
});

export const uploadedFileSchema = z.object({
  filename: z.string(),
  virtual_path: z.string(),
  size: z.number(),
  mime_type: z.string().optional(),
});

/**
 * The thread state every Antler agent has, with DeerFlow's reducers. Built-in tools write to it whether or
 * not the matching middleware is on (present_files → artifacts), so it is part of every agent.
 */
export const threadStateFields: Readonly<Record<string, StateField>> = Object.freeze({
  artifacts: new ReducedValue(z.array(z.string()).optional(), {
    inputSchema: z.array(z.string()).optional(),
    reducer: (a: string[] | undefined, b: string[] | undefined) => mergeArtifacts(a, b),
  }) as StateField,
  viewed_images: new ReducedValue(z.record(z.string(), viewedImageSchema).optional(), {
    inputSchema: z.record(z.string(), viewedImageSchema).optional(),
    reducer: (a: Record<string, ViewedImage> | undefined, b: Record<string, ViewedImage> | undefined) => mergeViewedImages(a, b),
  }) as StateField,
  todos: new ReducedValue(z.array(todoSchema).optional(), {
    inputSchema: z.array(todoSchema).nullable().optional(),
    reducer: (a: Todo[] | undefined, b: Todo[] | null | undefined) => mergeTodos(a, b),
  }) as StateField,
  sandbox: new ReducedValue(z.object({ sandbox_id: z.string().optional() }).optional(), {
    inputSchema: z.object({ sandbox_id: z.string().optional() }).nullable().optional(),
    reducer: (a: SandboxRef | undefined, b: SandboxRef | null | undefined) => mergeSandbox(a, b),
  }) as StateField,
  title: z.string().optional(),
  thread_data: threadDataSchema.optional(),
  uploaded_files: z.array(uploadedFileSchema).optional(),
  summary_text: z.string().nullable().optional(),
  /** Why the last run stopped early: `loop_capped`, `turn_capped`, `token_capped`; null when it ended normally. */
  stop_reason: z.string().nullable().optional(),
  /** Cumulative model token usage of the thread. */
  token_usage: z.object({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number() }).optional(),
});

/** Compiles a chain against DeerFlow's thread state and the run-context schema: what every Antler agent runs on. */
export function compileThreadPipeline(chain: readonly MiddlewareEntry[]): CompiledPipeline {
  return compilePipeline(chain, { state: threadStateFields, context: runContextSchema });
}
