// LangGraph assistants over Antler's agents: the lead agent is the assistant `agent` (its graph id too), each
// custom agent the user can select is an assistant whose id is its name. Assistants are read-only here: an
// Antler agent is a SOUL.md and a config.yaml, made with `PUT /api/agents/{name}`, not a graph configuration.

import {
  type AgentSummary,
  type AntlerClient,
  runContextSchema,
  SERVER_OWNED_CONTEXT_KEYS,
  serializedMessageSchema,
  valuesEventSchema,
} from "@antler/plugin-runtime";
import type { GatewayReply, GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { LangGraphError, LangGraphErrorCodes, parseRequest, unsupported } from "./errors.js";
import { type LangGraphRequest, type LangGraphRouteOptions, langGraphRoute, searchPageFields } from "./http.js";

/** The lead agent's assistant id and the graph id of every assistant (one graph, configured per agent). */
export const LEAD_ASSISTANT_ID = "agent";
/** DeerFlow's front end names the lead agent's graph `lead_agent`; it is accepted as the lead's id too. */
const LEAD_ALIASES = new Set([LEAD_ASSISTANT_ID, "lead_agent"]);
// Antler does not record when an agent was made or changed; LangGraph's timestamps read as the epoch.
const NO_TIMESTAMP = new Date(0).toISOString();

/** A LangGraph assistant (`Assistant` in `@langchain/langgraph-sdk`). */
export interface LangGraphAssistant {
  assistant_id: string;
  graph_id: string;
  config: { configurable: Record<string, unknown> };
  context: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  version: number;
  name: string;
  description: string;
}

/** What an assistant id runs as: the lead agent (`agent` undefined) or a custom agent by name. */
export interface ResolvedAssistant {
  assistant: LangGraphAssistant;
  /** The custom agent's name (`RunCallOptions.agent`), or undefined for the lead agent. */
  agent: string | undefined;
}

function leadAssistant(): LangGraphAssistant {
  return {
    assistant_id: LEAD_ASSISTANT_ID,
    graph_id: LEAD_ASSISTANT_ID,
    config: { configurable: {} },
    context: {},
    created_at: NO_TIMESTAMP,
    updated_at: NO_TIMESTAMP,
    metadata: { created_by: "system", antler_agent: null },
    version: 1,
    name: "Lead agent",
    description: "Antler's lead agent: the default agent of every run.",
  };
}

function customAssistant(agent: AgentSummary): LangGraphAssistant {
  return {
    assistant_id: agent.name,
    graph_id: LEAD_ASSISTANT_ID,
    config: { configurable: { agent_name: agent.name } },
    context: { agent_name: agent.name },
    created_at: NO_TIMESTAMP,
    updated_at: NO_TIMESTAMP,
    metadata: {
      created_by: agent.scope === "shared" ? "system" : "user",
      antler_agent: agent.name,
      scope: agent.scope,
      model: agent.model,
      tool_groups: agent.tool_groups,
      skills: agent.skills,
      thinking: agent.thinking,
    },
    version: 1,
    name: agent.name,
    description: agent.description,
  };
}

/**
 * The assistant an id names for this user: `agent` (or `lead_agent`) is the lead agent; any other id is a custom
 * agent's name (another user's agent is unknown). Throws the 404 `ASSISTANT_NOT_FOUND` (`where`, when given, names
 * the request field that held the id). The runs routes use it to turn a run's `assistant_id` into
 * `RunCallOptions.agent`.
 */
export async function resolveAssistant(
  client: AntlerClient,
  userId: string,
  assistantId: string,
  where?: string,
): Promise<ResolvedAssistant> {
  if (LEAD_ALIASES.has(assistantId)) return { assistant: { ...leadAssistant(), assistant_id: assistantId }, agent: undefined };
  const agents = (await client.listAgents({ userId })).agents;
  const agent = agents.find((a) => a.name === assistantId);
  if (!agent) {
    throw new LangGraphError(404, {
      code: LangGraphErrorCodes.ASSISTANT_NOT_FOUND,
      message: `Assistant ${JSON.stringify(assistantId.slice(0, 80))} not found`,
      hint: `Use "${LEAD_ASSISTANT_ID}" for the lead agent or a custom agent's name (POST <prefix>/assistants/search lists them).`,
      ...(where !== undefined ? { where } : {}),
    });
  }
  return { assistant: customAssistant(agent), agent: agent.name };
}

async function allAssistants(client: AntlerClient, userId: string): Promise<LangGraphAssistant[]> {
  const { agents } = await client.listAgents({ userId });
  return [leadAssistant(), ...agents.map(customAssistant)];
}

const assistantFilterSchema = z.object({
  graph_id: z.string().optional(),
  name: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const assistantSearchSchema = assistantFilterSchema.extend({
  ...searchPageFields,
  sort_by: z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]).optional(),
  select: z
    .array(
      z.enum(["assistant_id", "graph_id", "name", "description", "config", "context", "created_at", "updated_at", "metadata", "version"]),
    )
    .optional(),
});

function matches(assistant: LangGraphAssistant, filter: z.output<typeof assistantFilterSchema>): boolean {
  if (filter.graph_id !== undefined && assistant.graph_id !== filter.graph_id) return false;
  if (filter.name !== undefined && !assistant.name.toLowerCase().includes(filter.name.toLowerCase())) return false;
  for (const [key, value] of Object.entries(filter.metadata ?? {})) {
    if (JSON.stringify(assistant.metadata[key]) !== JSON.stringify(value)) return false;
  }
  return true;
}

async function searchAssistants(req: LangGraphRequest): Promise<GatewayReply> {
  const query = parseRequest(assistantSearchSchema, req.body ?? {});
  const found = (await allAssistants(req.client, req.userId)).filter((a) => matches(a, query));
  if (query.sort_by) {
    const key = query.sort_by;
    const sign = query.sort_order === "desc" ? -1 : 1;
    found.sort((a, b) => sign * String(a[key]).localeCompare(String(b[key])));
  }
  const page = found.slice(query.offset, query.offset + query.limit);
  const body = query.select ? page.map((a) => Object.fromEntries(query.select?.map((k) => [k, a[k]]) ?? [])) : page;
  const next = query.offset + query.limit < found.length ? String(query.offset + query.limit) : undefined;
  return { body, ...(next ? { headers: { "x-pagination-next": next } } : {}) };
}

// ------------------------------------------------------------------ schemas

const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }) as Record<string, unknown>;

/** The schemas of Antler's lead agent graph: its state (LangGraph values), a run's input, config and context. */
function graphSchemas(graphId: string): Record<string, unknown> {
  const langGraphMessage = serializedMessageSchema.extend({
    tool_calls: z
      .array(z.object({ id: z.string(), name: z.string(), args: z.record(z.string(), z.unknown()), type: z.literal("tool_call") }))
      .optional(),
  });
  const state = valuesEventSchema.shape.data.extend({ messages: z.array(langGraphMessage) });
  // `thinking_enabled` (DeerFlow's switch for extended thinking) and `reasoning_effort` are read from a run's context too.
  const context = jsonSchema(
    runContextSchema.extend({
      thinking_enabled: z.boolean().optional(),
      reasoning_effort: z.enum(["minimal", "low", "medium", "high"]).optional(),
    }),
  );
  // The keys the server sets itself are not the caller's to send.
  const properties = { ...((context.properties as Record<string, unknown> | undefined) ?? {}) };
  for (const key of SERVER_OWNED_CONTEXT_KEYS) delete properties[key];
  for (const key of ["run_id", "thread_id", "user_id"]) delete properties[key];
  return {
    graph_id: graphId,
    input_schema: jsonSchema(
      z.object({ messages: z.array(langGraphMessage.partial({ content: true }).extend({ type: z.enum(["human"]) })) }),
    ),
    output_schema: jsonSchema(state),
    state_schema: jsonSchema(state),
    config_schema: jsonSchema(
      z.object({ configurable: z.object({ thread_id: z.string().optional(), checkpoint_id: z.string().optional() }) }),
    ),
    context_schema: { ...context, properties },
  };
}

const graphQuerySchema = z.object({
  xray: z.union([z.enum(["true", "false"]).transform((v) => v === "true"), z.coerce.number().int().min(0)]).optional(),
});

/** `/assistants/*` under `options.prefix`. */
export function assistantRoutes(options: LangGraphRouteOptions): GatewayRoute[] {
  const p = `${options.prefix}/assistants`;
  const route = langGraphRoute;
  const readOnly = async (): Promise<GatewayReply> => {
    throw unsupported(
      "Assistants are Antler's lead agent and custom agents, and are read-only here",
      "Create, change or delete a custom agent with PUT or DELETE /api/agents/{name} (a SOUL.md and its config); it then appears as an assistant.",
    );
  };
  const unversioned = async (): Promise<GatewayReply> => {
    throw unsupported("Antler's agents have no version history", "Each assistant has one version, the agent's current files.");
  };
  return [
    route("POST", `${p}/search`, "assistants (the lead agent and the user's custom agents)", searchAssistants),
    route("POST", `${p}/count`, "how many assistants match", async (req) => {
      const filter = parseRequest(assistantFilterSchema, req.body ?? {});
      return { body: (await allAssistants(req.client, req.userId)).filter((a) => matches(a, filter)).length };
    }),
    route("GET", `${p}/:id`, "one assistant", async (req) => ({
      body: (await resolveAssistant(req.client, req.userId, req.params.id ?? "")).assistant,
    })),
    route("GET", `${p}/:id/graph`, "the agent's graph (nodes and edges)", async (req) => {
      const query = parseRequest(graphQuerySchema, req.query ?? {}, "query");
      const { agent } = await resolveAssistant(req.client, req.userId, req.params.id ?? "");
      return {
        body: await req.client.getAgentGraph({
          userId: req.userId,
          ...(agent !== undefined ? { agent } : {}),
          ...(query.xray !== undefined ? { xray: query.xray } : {}),
        }),
      };
    }),
    route("GET", `${p}/:id/schemas`, "state, input, config and context schemas", async (req) => {
      const { assistant } = await resolveAssistant(req.client, req.userId, req.params.id ?? "");
      return { body: graphSchemas(assistant.graph_id) };
    }),
    // Subagents run as tool calls of the lead agent (the `task` tool), each a graph of its own built per call,
    // not as subgraphs of its graph: there are none to describe.
    route("GET", `${p}/:id/subgraphs`, "subgraphs (none: subagents are tool calls)", async (req) => {
      await resolveAssistant(req.client, req.userId, req.params.id ?? "");
      return { body: {} };
    }),
    route("GET", `${p}/:id/subgraphs/:namespace`, "one subgraph namespace (none exist)", async (req) => {
      await resolveAssistant(req.client, req.userId, req.params.id ?? "");
      return { body: {} };
    }),
    route("POST", p, "create an assistant (refused: read-only)", readOnly),
    route("PATCH", `${p}/:id`, "update an assistant (refused: read-only)", readOnly),
    route("DELETE", `${p}/:id`, "delete an assistant (refused: read-only)", readOnly),
    route("POST", `${p}/:id/versions`, "assistant versions (refused: agents are not versioned)", unversioned),
    route("POST", `${p}/:id/latest`, "set an assistant's version (refused: agents are not versioned)", unversioned),
  ];
}
