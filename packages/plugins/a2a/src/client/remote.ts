import type { AgentCard } from "@a2a-js/sdk";
import { type Client, ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } from "@a2a-js/sdk/client";
import { AntlerError, ErrorCodes, stampTraceHeaders } from "@antler/kernel";
import { createGuardedFetch, createPinnedDispatcher, SsrfBlockedError, validatePublicHttpUrl } from "@antler/tools-web";
import type { A2AAgentConfig } from "./config.js";
import { A2A_URL_REFUSED, traceparentFor } from "./names.js";

export const AGENT_CARD_PATH = "/.well-known/agent-card.json";
const CARD_TTL_MS = 5 * 60_000;
/** A card that could not be read is not asked for again this soon (each agent build lists the cards). */
const CARD_FAILURE_TTL_MS = 30_000;

/** Options the tests replace: the DNS resolver of the SSRF guard, and where keys are read from. */
export interface RemoteAgentsOptions {
  lookup?: ((hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>) | undefined;
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The card URL as the resolver takes it: an origin (or "/") means the well-known path. */
export function cardLocation(cardUrl: string): { base: string; path: string } {
  const url = new URL(cardUrl);
  if (url.pathname === "/" || url.pathname === "") return { base: url.origin, path: AGENT_CARD_PATH };
  return { base: url.href, path: "" };
}

interface CachedCard {
  card: AgentCard | Error;
  at: number;
}

/**
 * The configured remote A2A agents: their cards (cached a few minutes) and per-call SDK clients whose every request
 * (the card, the JSON-RPC endpoint the card names, a cancel) goes through the SSRF guard, carries the agent's key
 * (only to the card's and the card's endpoints' origins), `X-Trace-Id` and `traceparent`.
 */
export class RemoteAgents {
  private readonly cards = new Map<string, CachedCard>();
  private readonly dispatchers = new Map<string, ReturnType<typeof createPinnedDispatcher>>();

  constructor(
    readonly agents: readonly A2AAgentConfig[],
    private readonly options: RemoteAgentsOptions = {},
  ) {}

  get(name: string): A2AAgentConfig | undefined {
    return this.agents.find((a) => a.name === name);
  }

  /** The agent's card (cached); a refused or unreachable card throws with the reason. */
  async card(agent: A2AAgentConfig, traceId: string, signal?: AbortSignal): Promise<AgentCard> {
    const cached = this.cards.get(agent.name);
    if (cached && !(cached.card instanceof Error) && Date.now() - cached.at < CARD_TTL_MS) return cached.card;
    try {
      await this.screen(agent, agent.card_url, "card URL");
      const { base, path } = cardLocation(agent.card_url);
      const resolver = new DefaultAgentCardResolver({ fetchImpl: this.fetchFor(agent, traceId, new Set([new URL(base).origin]), signal) });
      const card = await resolver.resolve(base, path);
      for (const endpoint of card.supportedInterfaces) await this.screen(agent, endpoint.url, "endpoint (from its card)");
      this.cards.set(agent.name, { card, at: Date.now() });
      return card;
    } catch (error) {
      this.cards.set(agent.name, { card: error instanceof Error ? error : new Error(String(error)), at: Date.now() });
      throw error;
    }
  }

  /** The card for the tool's description: a recent failure is answered from the cache, without asking again. */
  async describe(agent: A2AAgentConfig, traceId: string, signal?: AbortSignal): Promise<AgentCard | Error> {
    const cached = this.cards.get(agent.name);
    if (cached?.card instanceof Error && Date.now() - cached.at < CARD_FAILURE_TTL_MS) return cached.card;
    try {
      return await this.card(agent, traceId, signal);
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  /** A client for one tool call, under that call's trace id. */
  async client(agent: A2AAgentConfig, traceId: string, signal?: AbortSignal): Promise<{ client: Client; card: AgentCard }> {
    const card = await this.card(agent, traceId, signal);
    const origins = new Set([new URL(cardLocation(agent.card_url).base).origin]);
    for (const endpoint of card.supportedInterfaces) origins.add(new URL(endpoint.url).origin);
    const fetchImpl = this.fetchFor(agent, traceId, origins);
    // Only transports built on the guarded fetch: the SDK's defaults would use the global fetch for a card that
    // names another binding.
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    });
    return { client: await factory.createFromAgentCard(card), card };
  }

  /** Forgets a card, e.g. after its endpoint failed: the next call reads it again. */
  forget(name: string): void {
    this.cards.delete(name);
  }

  async close(): Promise<void> {
    const dispatchers = [...this.dispatchers.values()];
    this.dispatchers.clear();
    await Promise.all(dispatchers.map((d) => d.close().catch(() => undefined)));
  }

  /** Refuses a URL the SSRF guard refuses, naming the config key that would allow it. */
  private async screen(agent: A2AAgentConfig, url: string, what: string): Promise<void> {
    const verdict = await validatePublicHttpUrl(url, { allowPrivateAddresses: agent.allow_private_addresses, lookup: this.options.lookup });
    if (verdict.ok) return;
    throw refused(agent, `${what} ${url}`, verdict.reason);
  }

  private dispatcher(agent: A2AAgentConfig): ReturnType<typeof createPinnedDispatcher> {
    let dispatcher = this.dispatchers.get(agent.name);
    if (!dispatcher) {
      dispatcher = createPinnedDispatcher({ allowPrivateAddresses: agent.allow_private_addresses, lookup: this.options.lookup });
      this.dispatchers.set(agent.name, dispatcher);
    }
    return dispatcher;
  }

  private authHeader(agent: A2AAgentConfig): [string, string] | undefined {
    if (!agent.auth) return undefined;
    const env = this.options.env ?? process.env;
    const key = env[agent.auth.value_env];
    if (key === undefined || key === "") {
      throw new AntlerError(
        ErrorCodes.CONFIG_ENV_MISSING,
        `the key of remote agent "${agent.name}" is missing: ${agent.auth.value_env} is not set`,
        {
          where: `a2a_agents.${agent.name}.auth.value_env`,
          hint: `Set ${agent.auth.value_env} in the environment of the Antler process, or remove auth from the agent's entry.`,
        },
      );
    }
    return [agent.auth.header, agent.auth.scheme ? `${agent.auth.scheme} ${key}` : key];
  }

  private fetchFor(agent: A2AAgentConfig, traceId: string, keyOrigins: ReadonlySet<string>, signal?: AbortSignal): typeof fetch {
    const auth = this.authHeader(agent);
    const base: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      if (!headers.has("traceparent")) headers.set("traceparent", traceparentFor(traceId));
      const url = new URL(input instanceof Request ? input.url : String(input));
      // The key goes only to the agent's own origins: never to a host a redirect or an odd card points at.
      if (auth && keyOrigins.has(url.origin) && !headers.has(auth[0])) headers.set(auth[0], auth[1]);
      return globalThis.fetch(input, { ...init, headers });
    };
    const guarded = createGuardedFetch({
      fetch: base,
      allowPrivateAddresses: agent.allow_private_addresses,
      lookup: this.options.lookup,
      traceId,
      signal,
      dispatcher: this.dispatcher(agent),
    });
    return (input, init) => {
      const headers = new Headers(init?.headers);
      stampTraceHeaders(headers, traceId);
      return guarded(input as string | URL | Request, { ...init, headers }).catch((error: unknown) => {
        if (error instanceof SsrfBlockedError) throw refused(agent, error.url, error.reason);
        throw error;
      });
    };
  }
}

function refused(agent: A2AAgentConfig, what: string, reason: string): AntlerError {
  return new AntlerError(A2A_URL_REFUSED, `refused to call remote agent "${agent.name}": its ${what} is not allowed (${reason})`, {
    where: `a2a_agents.${agent.name}`,
    hint: agent.allow_private_addresses
      ? "Cloud metadata addresses are always blocked."
      : `Remote agents may be reached only at public addresses; set allow_private_addresses: true on the a2a_agents entry "${agent.name}" for an agent on loopback or a private network (dev, tests).`,
  });
}
