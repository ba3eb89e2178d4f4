import { type AntlerTool, DEFAULT_USER_ID } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { ToolRuntime } from "@langchain/core/tools";
import { z } from "zod";
import { FACT_CATEGORIES } from "./config.js";
import { type MemoryService, memoryScope } from "./service.js";

export const MEMORY_TOOL_NAMES = ["memory_search", "memory_add", "memory_update", "memory_delete"] as const;

function scopeFrom(runtime: ToolRuntime) {
  const ctx = ((runtime as { context?: unknown }).context ?? {}) as Record<string, unknown>;
  const userId = typeof ctx.user_id === "string" && ctx.user_id !== "" ? ctx.user_id : DEFAULT_USER_ID;
  const agent = typeof ctx.agent_name === "string" ? ctx.agent_name : "";
  const threadId = typeof ctx.thread_id === "string" ? ctx.thread_id : undefined;
  return { scope: memoryScope(userId, agent), threadId };
}

const category = z.enum(FACT_CATEGORIES);

/**
 * DeerFlow's memory tools, for `memory.mode: tool`: the model decides what to remember. Scoped to the run's user
 * and custom agent; content is redacted before it is written, like every other path.
 */
export function memoryTools(service: MemoryService): AntlerTool[] {
  return [
    defineTool({
      name: "memory_search",
      description:
        "Search your long-term memory of this user (facts from earlier conversations) by keywords. Returns the most relevant facts with their ids.",
      schema: z.object({
        query: z.string().min(1).describe("Keywords to look for."),
        category: category.optional().describe("Only facts of this category."),
        limit: z.number().int().min(1).max(50).default(10),
      }),
      run: async ({ query, category: cat, limit }, runtime) => {
        const { scope } = scopeFrom(runtime);
        const hits = await service.search(scope, query, { limit, ...(cat ? { category: cat } : {}) });
        if (hits.length === 0) return `No remembered facts match "${query}".`;
        return JSON.stringify(
          hits.map((h) => ({ id: h.id, content: h.content, category: h.category, confidence: h.confidence, updated_at: h.updated_at })),
        );
      },
    }),
    defineTool({
      name: "memory_add",
      description:
        "Remember a durable fact about the user for future conversations (a preference, background, goal). One short sentence. Never store secrets.",
      schema: z.object({
        content: z.string().min(1).max(2000),
        category: category.default("context"),
        confidence: z.number().min(0).max(1).default(0.7),
      }),
      run: async (args, runtime) => {
        const { scope, threadId } = scopeFrom(runtime);
        const fact = await service.createFact(scope, args, threadId ? `tool:thread:${threadId}` : "tool");
        return JSON.stringify({ remembered: fact });
      },
    }),
    defineTool({
      name: "memory_update",
      description: "Change a remembered fact (its id comes from memory_search): new content, category or confidence.",
      schema: z.object({
        fact_id: z.string().min(1),
        content: z.string().min(1).max(2000).optional(),
        category: category.optional(),
        confidence: z.number().min(0).max(1).optional(),
      }),
      run: async ({ fact_id, ...patch }, runtime) => {
        const { scope } = scopeFrom(runtime);
        return JSON.stringify({ updated: await service.updateFact(scope, fact_id, patch) });
      },
    }),
    defineTool({
      name: "memory_delete",
      description: "Forget a remembered fact (its id comes from memory_search), e.g. when the user says it is wrong.",
      schema: z.object({ fact_id: z.string().min(1) }),
      run: async ({ fact_id }, runtime) => {
        const { scope } = scopeFrom(runtime);
        return JSON.stringify(await service.deleteFact(scope, fact_id));
      },
    }),
  ];
}
