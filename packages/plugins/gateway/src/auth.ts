// Who is calling: an API key (programs), a browser session cookie the gateway issued for a key (the console), or
// the single user of `auth.mode: none`. Sessions live in this instance's memory: a restart signs browsers out.
import { createHash, randomBytes } from "node:crypto";
import type { Principal } from "@antler/plugin-runtime";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { GatewayConfig } from "./config.js";
import { allowedHostMatcher, isOwnOrigin } from "./cross-site.js";
import type { GatewayEnv } from "./env.js";
import { GatewayErrorCodes, HttpError } from "./errors.js";

export const SESSION_COOKIE = "antler_session";
/**
 * The header a cookie-authenticated POST, PUT, PATCH or DELETE must carry (any value). A page on another origin
 * cannot add it without a CORS preflight the gateway does not grant, so a forged form or `fetch` is refused.
 */
export const SESSION_CSRF_HEADER = "x-antler-csrf";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const digest = (secret: string) => createHash("sha256").update(secret).digest("hex");

interface Session {
  principal: Principal;
  expiresAt: number;
}

/** The sessions this instance issued, by the digest of their token (the token itself is only in the cookie). */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly now: () => number = Date.now) {}

  create(principal: Principal, ttlMs: number): { token: string; expiresAt: number } {
    this.sweep();
    const token = randomBytes(32).toString("base64url");
    const expiresAt = this.now() + ttlMs;
    this.sessions.set(digest(token), { principal, expiresAt });
    return { token, expiresAt };
  }

  /** The session's principal and expiry; an expired one is forgotten and answers null. */
  get(token: string): Session | null {
    const key = digest(token);
    const session = this.sessions.get(key);
    if (!session) return null;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(key);
      return null;
    }
    return session;
  }

  revoke(token: string): boolean {
    return this.sessions.delete(digest(token));
  }

  get size(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
  }
}

function unauthenticated(message: string, hint: string): HttpError {
  return new HttpError(401, GatewayErrorCodes.UNAUTHENTICATED, message, hint, undefined, { "WWW-Authenticate": 'Bearer realm="antler"' });
}

/** Sets `principal` (and `authVia`) for /api requests, or answers 401; cookie writes also pass the CSRF check. */
export function authMiddleware(config: GatewayConfig, sessions: SessionStore): MiddlewareHandler<GatewayEnv> {
  const users = new Map(config.auth.api_keys.map((entry) => [digest(entry.key), { userId: entry.user, role: entry.role }]));
  const listedOrigins = new Set(config.cors.allow_origins.map((o) => o.trim().toLowerCase().replace(/\/+$/, "")));
  return async (c, next) => {
    if (c.req.method === "OPTIONS") return next();
    if (config.auth.mode === "none") {
      c.set("principal", { kind: "user", userId: config.auth.user, ...(config.auth.role !== undefined ? { role: config.auth.role } : {}) });
      c.set("authVia", "none");
      return next();
    }
    const bearer = c.req
      .header("authorization")
      ?.match(/^Bearer\s+(.+)$/i)?.[1]
      ?.trim();
    const key = bearer ?? c.req.header("x-api-key")?.trim();
    if (key) {
      const found = users.get(digest(key));
      if (!found) throw unauthenticated("the API key is not valid", "Check the key; keys are listed under auth.api_keys in config.yaml.");
      // Always a user principal: nothing that arrives over HTTP can act as the internal principal.
      c.set(
        "principal",
        Object.freeze({ kind: "user" as const, userId: found.userId, ...(found.role !== undefined ? { role: found.role } : {}) }),
      );
      c.set("authVia", "key");
      return next();
    }
    const token = getCookie(c, SESSION_COOKIE);
    if (!token) {
      throw unauthenticated(
        "this endpoint needs an API key",
        "Send `Authorization: Bearer <key>` or `X-API-Key: <key>` with a key from the gateway's auth.api_keys (a browser signs in once with POST /api/session).",
      );
    }
    const session = sessions.get(token);
    if (!session) {
      throw unauthenticated("the session has expired or was signed out", "Sign in again with an API key (POST /api/session).");
    }
    if (STATE_CHANGING.has(c.req.method)) assertSameSiteWrite(c, config, listedOrigins);
    c.set("principal", session.principal);
    c.set("authVia", "session");
    return next();
  };
}

/**
 * A write carried by the session cookie must say it comes from a script on an allowed page: the custom header
 * (which another origin cannot send without a preflight), and an `Origin`, when the browser sends one, that is the
 * gateway's own or listed in `cors.allow_origins`.
 */
function assertSameSiteWrite(c: Context<GatewayEnv>, config: GatewayConfig, listed: ReadonlySet<string>): void {
  const refuse = (why: string) =>
    new HttpError(
      403,
      GatewayErrorCodes.CROSS_SITE_REQUEST,
      `refused a ${c.req.method} ${new URL(c.req.url).pathname} signed in by the session cookie: ${why}`,
      `Browser writes with the session cookie must send the \`X-Antler-CSRF\` header from the gateway's own pages (or an origin in cors.allow_origins). Programs send their API key instead.`,
    );
  if (c.req.header(SESSION_CSRF_HEADER) === undefined) throw refuse("the X-Antler-CSRF header is missing");
  const origin = c.req.header("origin");
  if (origin === undefined) return;
  if (listed.has(origin.trim().toLowerCase().replace(/\/+$/, ""))) return;
  if (!isOwnOrigin(origin, c.req.header("host"), allowedHostMatcher(config.allowed_hosts)))
    throw refuse(`it comes from the page origin ${JSON.stringify(origin.slice(0, 200))}`);
}

function cookieIsSecure(c: Context<GatewayEnv>, setting: GatewayConfig["auth"]["session_cookie_secure"]): boolean {
  if (setting !== "auto") return setting === "always";
  if (new URL(c.req.url).protocol === "https:") return true;
  // Behind a TLS proxy. Trusting the header can only make the cookie stricter.
  return (c.req.header("x-forwarded-proto") ?? "").split(",")[0]?.trim().toLowerCase() === "https";
}

/** `POST /api/session` (a key starts a browser session), `GET` (who the session is), `DELETE` (sign out). */
export function mountSessionRoutes(app: Hono<GatewayEnv>, config: GatewayConfig, sessions: SessionStore): void {
  const ttlMs = config.auth.session_ttl_seconds * 1000;
  app.post("/api/session", (c) => {
    if (c.get("authVia") !== "key") {
      throw new HttpError(
        400,
        GatewayErrorCodes.INVALID_REQUEST,
        config.auth.mode === "none"
          ? "auth.mode none has no sessions: every request is the local user"
          : "a session starts from an API key",
        "Send the key in `Authorization: Bearer <key>` or `X-API-Key: <key>`.",
      );
    }
    const principal = c.get("principal");
    const { token, expiresAt } = sessions.create(principal, ttlMs);
    setCookie(c, SESSION_COOKIE, token, {
      httpOnly: true,
      secure: cookieIsSecure(c, config.auth.session_cookie_secure),
      sameSite: "Strict",
      path: "/",
      maxAge: config.auth.session_ttl_seconds,
      expires: new Date(expiresAt),
    });
    return c.json({ user: principal.userId, expires_at: new Date(expiresAt).toISOString() }, 201, { "cache-control": "no-store" });
  });
  app.get("/api/session", (c) => {
    const token = c.get("authVia") === "session" ? getCookie(c, SESSION_COOKIE) : undefined;
    const session = token ? sessions.get(token) : null;
    return c.json({
      user: c.get("principal").userId,
      via: c.get("authVia"),
      expires_at: session ? new Date(session.expiresAt).toISOString() : null,
    });
  });
  app.delete("/api/session", (c) => {
    const token = getCookie(c, SESSION_COOKIE);
    if (token) sessions.revoke(token);
    deleteCookie(c, SESSION_COOKIE, {
      path: "/",
      httpOnly: true,
      sameSite: "Strict",
      secure: cookieIsSecure(c, config.auth.session_cookie_secure),
    });
    return c.body(null, 204);
  });
}
