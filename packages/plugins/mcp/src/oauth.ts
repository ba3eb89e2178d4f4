import { redactText } from "@antler/kernel";
import type { McpOAuthConfig } from "./config.js";

/** Refresh this long before `expires_in` runs out, capped at a tenth of the token's lifetime for short-lived tokens. */
const REFRESH_MARGIN_MS = 60_000;
const ERROR_BODY_CHARS = 300;

interface CachedToken {
  readonly accessToken: string;
  /** Epoch ms after which the token is refreshed before use; `Infinity` when the endpoint gave no `expires_in`. */
  readonly refreshAt: number;
}

/**
 * Access tokens for one HTTP/SSE MCP server (OAuth 2 client_credentials or refresh_token grant). Tokens are
 * only ever sent to the token endpoint and the MCP server; they never appear in errors or logs.
 */
export class OAuthTokenSource {
  private cached: CachedToken | undefined;
  private pending: Promise<CachedToken> | undefined;
  private refreshToken: string | undefined;
  /** How many token requests were made; for status and tests. */
  requests = 0;

  constructor(
    private readonly server: string,
    private readonly config: McpOAuthConfig,
    private readonly baseFetch: typeof fetch = globalThis.fetch,
    private readonly now: () => number = Date.now,
  ) {
    this.refreshToken = config.refresh_token;
  }

  /** A valid access token: the cached one, or a fresh one when it is missing, expiring soon or `force`d. */
  async token(force = false): Promise<string> {
    const cached = this.cached;
    if (!force && cached && this.now() < cached.refreshAt) return cached.accessToken;
    // Concurrent requests share one token request.
    this.pending ??= this.request().finally(() => {
      this.pending = undefined;
    });
    return (await this.pending).accessToken;
  }

  /** Forgets the cached token (e.g. after the server answered 401), so the next `token()` requests a new one. */
  invalidate(rejected: string): void {
    if (this.cached?.accessToken === rejected) this.cached = undefined;
  }

  private async request(): Promise<CachedToken> {
    const { config } = this;
    const body = new URLSearchParams({ grant_type: config.grant, client_id: config.client_id });
    if (config.client_secret !== undefined) body.set("client_secret", config.client_secret);
    if (config.scope !== undefined) body.set("scope", config.scope);
    if (config.grant === "refresh_token") body.set("refresh_token", this.refreshToken ?? "");
    const where = `OAuth token request for MCP server ${this.server} (${config.grant} at ${config.token_url})`;
    this.requests++;
    const started = this.now();
    let response: Response;
    try {
      response = await this.baseFetch(config.token_url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body,
      });
    } catch (err) {
      throw new Error(`${where} failed: ${redactText(err instanceof Error ? err.message : String(err))}`);
    }
    const text = await response.text();
    let json: Record<string, unknown> | null = null;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === "object") json = parsed as Record<string, unknown>;
    } catch {
      json = null;
    }
    if (!response.ok || typeof json?.access_token !== "string" || json.access_token.length === 0) {
      // Report only the OAuth error fields (never echo a body that might hold a token).
      const reason =
        typeof json?.error === "string"
          ? `${json.error}${typeof json.error_description === "string" ? `: ${json.error_description}` : ""}`
          : response.ok
            ? "the response has no access_token"
            : text.slice(0, ERROR_BODY_CHARS);
      throw new Error(`${where} failed: HTTP ${response.status} ${redactText(reason)}; check oauth.client_id, client_secret and token_url`);
    }
    if (typeof json.refresh_token === "string" && json.refresh_token.length > 0) this.refreshToken = json.refresh_token;
    const expiresIn = typeof json.expires_in === "number" ? json.expires_in : Number(json.expires_in);
    const lifetime = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : Number.POSITIVE_INFINITY;
    const margin = Math.min(REFRESH_MARGIN_MS, lifetime / 10);
    const token: CachedToken = { accessToken: json.access_token, refreshAt: started + lifetime - margin };
    this.cached = token;
    return token;
  }

  /**
   * A fetch that sends `Authorization: Bearer <token>` and, when the server answers 401 to a token it just
   * accepted before, requests a new token once and retries.
   */
  authorizedFetch(base: typeof fetch = globalThis.fetch): typeof fetch {
    return async (input, init) => {
      const send = async (force: boolean) => {
        const token = await this.token(force);
        const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
        headers.set("authorization", `Bearer ${token}`);
        return { token, response: await base(input, { ...init, headers }) };
      };
      const first = await send(false);
      if (first.response.status !== 401 || (init?.body !== undefined && init.body !== null && typeof init.body !== "string")) {
        return first.response;
      }
      this.invalidate(first.token);
      await first.response.body?.cancel().catch(() => undefined);
      return (await send(true)).response;
    };
  }
}
