import type { AgentCard, AgentSkill } from "@a2a-js/sdk";
import type { AntlerClient } from "@antler/plugin-runtime";
import { LEAD_SKILL_ID } from "./handler.js";

export interface CardOptions {
  name: string;
  description: string;
  /** The JSON-RPC endpoint's path on the gateway. */
  prefix: string;
  version: string;
  /** Whether the server takes push-notification configs. */
  pushNotifications?: boolean | undefined;
  /** Whether the HTTP+JSON binding is served too (at `restPath(prefix)`). */
  rest?: boolean | undefined;
}

/** Where the HTTP+JSON binding lives: under the JSON-RPC endpoint's path. */
export function restPath(prefix: string): string {
  return `${prefix}/rest`;
}

const TEXT_MODES = ["text/plain", "application/json"];

/**
 * The distribution's agent card: the lead agent and each shared custom agent as skills (a message picks one with
 * `metadata.skill`), the JSON-RPC interface, streaming, and the gateway's API keys as the security scheme.
 */
export async function buildAgentCard(client: AntlerClient, origin: string, options: CardOptions): Promise<AgentCard> {
  const { agents } = await client.listAgents();
  const skills: AgentSkill[] = [
    {
      id: LEAD_SKILL_ID,
      name: "Lead agent",
      description: options.description,
      tags: ["lead"],
      examples: [],
      inputModes: TEXT_MODES,
      outputModes: ["text/plain"],
      securityRequirements: [],
    },
    ...agents
      .filter((a) => a.scope === "shared")
      .map(
        (a): AgentSkill => ({
          id: a.name,
          name: a.name,
          description: a.description,
          tags: ["custom-agent"],
          examples: [],
          inputModes: TEXT_MODES,
          outputModes: ["text/plain"],
          securityRequirements: [],
        }),
      ),
  ];
  return {
    name: options.name,
    description: options.description,
    supportedInterfaces: [
      { url: `${origin}${options.prefix}`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      ...(options.rest
        ? [{ url: `${origin}${restPath(options.prefix)}`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" }]
        : []),
    ],
    provider: undefined,
    version: options.version,
    capabilities: { streaming: true, pushNotifications: options.pushNotifications === true, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: { description: "An API key from the gateway's auth.api_keys, as a bearer token.", scheme: "Bearer", bearerFormat: "" },
        },
      },
      apiKey: {
        scheme: {
          $case: "apiKeySecurityScheme",
          value: { description: "The same API key in the X-API-Key header.", location: "header", name: "X-API-Key" },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { apiKey: { list: [] } } }],
    defaultInputModes: TEXT_MODES,
    defaultOutputModes: ["text/plain"],
    skills,
    signatures: [],
  };
}
