import { runCreateRequestSchema, threadCreateRequestSchema } from "@antler/plugin-runtime";
import { z } from "zod";
import { callerDataSchema, type LimitViolation } from "./caller-data.js";

export {
  boundedCallerData,
  CALLER_DATA_LIMITS,
  callerDataSchema,
  findCallerDataViolation,
  isTraceIdKey,
  type LimitViolation,
  withoutTraceIdKeys,
} from "./caller-data.js";

/** Deepest nesting of any JSON body, on every route. Deeper bodies are refused before any schema runs. */
export const MAX_JSON_DEPTH = 64;

const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] => typeof value === "object" && value !== null;

/** The first place `value` nests deeper than `maxDepth`, walked without recursion (deep input cannot blow the stack). */
export function findDepthViolation(value: unknown, maxDepth: number): LimitViolation | null {
  const stack: Array<{ value: unknown; depth: number; path: string[] }> = [{ value, depth: 0, path: [] }];
  while (stack.length > 0) {
    const item = stack.pop() as { value: unknown; depth: number; path: string[] };
    if (!isContainer(item.value)) continue;
    if (item.depth >= maxDepth) {
      return {
        limit: "max_json_depth",
        max: maxDepth,
        path: item.path.slice(0, 8).join(".") + (item.path.length > 8 ? ".…" : ""),
        message: `the JSON body nests deeper than ${maxDepth} levels`,
      };
    }
    for (const [key, child] of Object.entries(item.value)) {
      if (isContainer(child)) stack.push({ value: child, depth: item.depth + 1, path: [...item.path, key] });
    }
  }
  return null;
}

/** `runCreateRequestSchema` of the kernel with its caller-owned objects bounded and scrubbed of trace ids. */
export const gatewayRunRequestSchema = runCreateRequestSchema.safeExtend({
  context: callerDataSchema("context").optional(),
  metadata: callerDataSchema("metadata").optional(),
  config: z
    .object({
      configurable: callerDataSchema("config.configurable").optional(),
      context: callerDataSchema("config.context").optional(),
      metadata: callerDataSchema("config.metadata").optional(),
    })
    .loose()
    .optional(),
});

/** `threadCreateRequestSchema` of the kernel with thread metadata bounded; a thread never holds a trace id. */
export const gatewayThreadCreateSchema = threadCreateRequestSchema.safeExtend({
  metadata: callerDataSchema("metadata").optional(),
});
