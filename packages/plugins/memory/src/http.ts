import { ErrorCodes, isAntlerError } from "@antler/kernel";
import { defineGatewayRoute, type GatewayReply, type GatewayRequest, type GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { MemoryClient } from "./client.js";
import { MemoryErrorCodes } from "./errors.js";
import { factCreateSchema, factUpdateSchema, memoryExportSchema, memoryImportOptionsSchema } from "./schemas.js";

const BAD_REQUEST = new Set<string>([MemoryErrorCodes.INVALID, ErrorCodes.PATH_UNSAFE]);

async function answer(fn: () => Promise<GatewayReply>): Promise<GatewayReply> {
  try {
    return await fn();
  } catch (error) {
    if (isAntlerError(error) && (BAD_REQUEST.has(error.code) || error.code === MemoryErrorCodes.NOT_FOUND)) {
      return {
        status: error.code === MemoryErrorCodes.NOT_FOUND ? 404 : 400,
        body: {
          error: {
            code: error.code,
            message: error.message.split("\n  hint:")[0],
            ...(error.hint ? { hint: error.hint } : {}),
            ...(error.where ? { where: error.where } : {}),
          },
        },
      };
    }
    throw error;
  }
}

const agentQuery = z.object({ agent: z.string().optional() });
const listQuery = agentQuery.extend({
  query: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  category: z.string().optional(),
});
const importQuery = agentQuery.extend({ mode: memoryImportOptionsSchema.shape.mode });

/** A client for the authenticated caller and the `?agent=` they name ("" or none: their default memory). */
function memory(request: GatewayRequest<unknown, { agent?: string | undefined }>): MemoryClient {
  return new MemoryClient(request.client.kernel, { userId: request.userId, agent: request.query.agent || null });
}

/**
 * `/api/memory` routes, mounted by `@antler/plugin-gateway` behind its API-key auth. Each acts on the caller's
 * own memory (`?agent=<name>` for a custom agent's): another user's fact id answers 404, like a missing one.
 * The handlers are thin: they call `MemoryClient`, so HTTP and in-process callers get the same answers.
 */
export function memoryRoutes(): GatewayRoute[] {
  const id = (request: GatewayRequest) => request.params.id ?? "";
  return [
    defineGatewayRoute({
      method: "GET",
      path: "/memory",
      summary: "Your memory: profile, history summaries and facts (?agent= for a custom agent's).",
      query: agentQuery,
      handler: (request) => answer(async () => ({ body: await memory(request).getMemory() })),
    }),
    defineGatewayRoute({
      method: "DELETE",
      path: "/memory",
      summary: "Clear your memory (profile, history and facts).",
      query: agentQuery,
      handler: (request) => answer(async () => ({ body: await memory(request).clearMemory() })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/memory/facts",
      summary: "List facts (newest first), or search them with ?query= (most relevant first).",
      query: listQuery,
      handler: (request) =>
        answer(async () => {
          const { query, limit, category } = request.query;
          const client = memory(request);
          if (query !== undefined) {
            return {
              body: await client.searchMemory(query, { ...(limit !== undefined ? { limit } : {}), ...(category ? { category } : {}) }),
            };
          }
          return { body: await client.listFacts(limit !== undefined ? { limit } : {}) };
        }),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/memory/facts",
      summary: "Add a fact: { content, category?, confidence? }. Secrets in it are redacted before it is stored.",
      query: agentQuery,
      body: factCreateSchema,
      handler: (request) => answer(async () => ({ status: 201, body: await memory(request).createFact(request.body) })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/memory/facts/:id",
      summary: "One fact.",
      query: agentQuery,
      handler: (request) => answer(async () => ({ body: await memory(request).getFact(id(request)) })),
    }),
    defineGatewayRoute({
      method: "PATCH",
      path: "/memory/facts/:id",
      summary: "Change a fact: { content?, category?, confidence? }.",
      query: agentQuery,
      body: factUpdateSchema,
      handler: (request) => answer(async () => ({ body: await memory(request).updateFact(id(request), request.body) })),
    }),
    defineGatewayRoute({
      method: "DELETE",
      path: "/memory/facts/:id",
      summary: "Delete a fact.",
      query: agentQuery,
      handler: (request) => answer(async () => ({ body: await memory(request).deleteFact(id(request)) })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/memory/export",
      summary: "Your memory as an export document (the body POST /api/memory/import takes).",
      query: agentQuery,
      handler: (request) => answer(async () => ({ body: await memory(request).exportMemory() })),
    }),
    defineGatewayRoute({
      method: "POST",
      path: "/memory/import",
      summary: "Load an export document: ?mode=merge (default) or ?mode=replace. Validated before anything is written.",
      query: importQuery,
      body: memoryExportSchema,
      handler: (request) => answer(async () => ({ body: await memory(request).importMemory(request.body, { mode: request.query.mode }) })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/memory/config",
      summary: "The effective memory configuration.",
      handler: (request) => answer(async () => ({ body: new MemoryClient(request.client.kernel).getMemoryConfig() })),
    }),
    defineGatewayRoute({
      method: "GET",
      path: "/memory/status",
      summary: "Your fact count, last extraction and this process's pending extractions.",
      query: agentQuery,
      handler: (request) => answer(async () => ({ body: await memory(request).getMemoryStatus() })),
    }),
  ];
}
