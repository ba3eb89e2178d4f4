import { z } from "zod";

/** A remote agent's name: what the model passes as `agent` (and what custom events and logs name). */
const agentNameSchema = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, "a name such as research_desk: a letter, then letters, digits, _ or - (at most 64)");

/** The header a remote agent's key goes in; its value comes from an environment variable, never from config.yaml. */
export const a2aAgentAuthSchema = z.strictObject({
  header: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, "an HTTP header name")
    .default("Authorization")
    .describe("The header the key is sent in."),
  scheme: z
    .string()
    .regex(/^[A-Za-z0-9._-]*$/)
    .default("Bearer")
    .describe('Written before the key with one space ("Bearer <key>"); "" sends the key alone (e.g. for X-API-Key).'),
  value_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
    .describe("The environment variable that holds the key; read when the tool calls the agent."),
});

export const a2aAgentSchema = z.strictObject({
  name: agentNameSchema,
  card_url: z
    .url({ protocol: /^https?$/ })
    .describe("The agent card: its URL, or the agent's origin (then /.well-known/agent-card.json is read)."),
  description: z.string().min(1).optional().describe("Shown to the model instead of the card's own description."),
  auth: a2aAgentAuthSchema.optional(),
  timeout_seconds: z.number().positive().max(86_400).default(300).describe("One call, from the card to the task's end."),
  allow_private_addresses: z
    .boolean()
    .default(false)
    .describe(
      "Let the card and task URLs reach loopback and private addresses (dev, tests, an agent on the same network). Cloud metadata stays blocked.",
    ),
});

export type A2AAgentConfig = z.output<typeof a2aAgentSchema>;

export const a2aAgentsSectionSchema = z.array(a2aAgentSchema).superRefine((agents, issues) => {
  const seen = new Set<string>();
  for (const [i, agent] of agents.entries()) {
    if (seen.has(agent.name)) issues.addIssue({ code: "custom", path: [i, "name"], message: `agent name "${agent.name}" is listed twice` });
    seen.add(agent.name);
  }
});

/** The top-level `a2a_agents:` section of config.yaml, owned by this plugin. */
export const a2aClientConfigSections = { a2a_agents: a2aAgentsSectionSchema.default([]) };
