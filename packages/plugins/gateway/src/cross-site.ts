// What keeps web pages from using a gateway that asks for no key (`auth.mode: none`). The browser that visits
// them can reach loopback, so without these checks any page could drive the API with "simple" cross-site
// requests (text/plain or form POSTs need no CORS preflight), or read it after rebinding its DNS name to 127.0.0.1.
import type { Context, MiddlewareHandler } from "hono";
import type { GatewayConfig } from "./config.js";
import type { GatewayEnv } from "./env.js";
import { GatewayErrorCodes, HttpError } from "./errors.js";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The lower-case name in a Host header value (`name[:port]` or `[v6][:port]`), without a trailing dot. */
export function hostNameOf(host: string): string {
  const value = host.trim().toLowerCase();
  const name = value.startsWith("[") ? value.slice(0, value.indexOf("]") + 1) : value.replace(/:\d*$/, "");
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/** Names that always resolve to this machine: a rebinding attacker cannot own them. */
export function isLoopbackHostName(name: string): boolean {
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/** Matches a host name against `allowed_hosts` entries (exact, or `*.example.com` for any subdomain). */
export function allowedHostMatcher(entries: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of entries.map((e) => e.toLowerCase())) {
    if (entry.startsWith("*.")) suffixes.push(entry.slice(1));
    else exact.add(entry);
  }
  return (name) => exact.has(name) || suffixes.some((suffix) => name.endsWith(suffix));
}

/**
 * Refuses a request whose Host is neither a loopback name nor in `allowed_hosts` (421): a page on a DNS name
 * rebound to this machine sends its own name. Always on in `auth.mode: none`; in `api_keys` mode only when
 * `allowed_hosts` is set, since a rebound page holds no key and proxies and probes use all sorts of names.
 * A request without Host is let through: every browser sends one.
 */
export function hostCheck(config: GatewayConfig): MiddlewareHandler<GatewayEnv> | null {
  if (config.auth.mode !== "none" && config.allowed_hosts.length === 0) return null;
  const isAllowed = allowedHostMatcher(config.allowed_hosts);
  return async (c, next) => {
    const host = c.req.header("host");
    if (host === undefined) return next();
    const name = hostNameOf(host);
    if (isLoopbackHostName(name) || isAllowed(name)) return next();
    throw new HttpError(
      421,
      GatewayErrorCodes.HOST_NOT_ALLOWED,
      `this gateway does not answer to the host ${JSON.stringify(host.slice(0, 200))}`,
      "Reach it as localhost or 127.0.0.1, or add the name to allowed_hosts in the gateway config. A name that is not listed may be a web page's DNS name pointed at this machine (DNS rebinding).",
      { host: host.slice(0, 200) },
    );
  };
}

/**
 * In `auth.mode: none`, where being able to reach the port is the only credential, refuses what a browser marks
 * as coming from another page: a state-changing request (POST, PUT, PATCH, DELETE) whose `Origin` is not the
 * gateway's own (its Host, an `allowed_hosts` name, or an origin listed in `cors.allow_origins`) or whose
 * `Sec-Fetch-Site` is not `same-origin`/`none`, and any non-navigation /api read marked cross-site or
 * same-site. Clients that send neither header (curl, scripts, the CLI) are not browsers and pass.
 */
export function sameOriginCheck(config: GatewayConfig): MiddlewareHandler<GatewayEnv> | null {
  if (config.auth.mode !== "none") return null;
  const listed = new Set(config.cors.allow_origins.map(normalOrigin));
  const isAllowedHost = allowedHostMatcher(config.allowed_hosts);
  return async (c, next) => {
    const origin = c.req.header("origin");
    const fetchSite = c.req.header("sec-fetch-site")?.toLowerCase();
    const trusted = origin !== undefined && listed.has(normalOrigin(origin));
    if (trusted) return next();
    if (STATE_CHANGING.has(c.req.method)) {
      if (origin !== undefined && !isOwnOrigin(origin, c.req.header("host"), isAllowedHost)) {
        throw crossSite(c, `it comes from the page origin ${JSON.stringify(origin.slice(0, 200))}`);
      }
      if (fetchSite !== undefined && fetchSite !== "same-origin" && fetchSite !== "none") {
        throw crossSite(c, `the browser marked it Sec-Fetch-Site: ${fetchSite.slice(0, 40)}`);
      }
      return next();
    }
    // Reads change nothing, but another site's page has no business embedding the API's answers either
    // (<script>, <img>, no-cors fetch). A top-level navigation (a link the user follows) is fine.
    const isApi = new URL(c.req.url).pathname.startsWith("/api");
    if (isApi && (fetchSite === "cross-site" || fetchSite === "same-site") && c.req.header("sec-fetch-mode") !== "navigate") {
      throw crossSite(c, `the browser marked it Sec-Fetch-Site: ${fetchSite}`);
    }
    return next();
  };
}

/**
 * In `auth.mode: none`, a JSON route takes only a body declared `Content-Type: application/json` (or
 * `application/*+json`), which a cross-site page cannot send without a CORS preflight; a request without a
 * Content-Type must have no body (`curl -X POST` with nothing to send).
 */
export function assertJsonContentType(c: Context<GatewayEnv>): void {
  const declared = c.req.header("content-type");
  if (declared !== undefined) {
    const media = declared.split(";")[0]?.trim().toLowerCase() ?? "";
    if (media === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(media)) return;
  } else {
    const length = c.req.header("content-length");
    const hasBody = c.req.header("transfer-encoding") !== undefined || (length !== undefined && length.trim() !== "0");
    if (!hasBody) return;
  }
  throw new HttpError(
    415,
    GatewayErrorCodes.UNSUPPORTED_MEDIA_TYPE,
    `this route takes a JSON body, sent with Content-Type: application/json (got ${declared === undefined ? "no Content-Type" : JSON.stringify(declared.slice(0, 100))})`,
    "Send the header `Content-Type: application/json` (curl: -H 'content-type: application/json'). With auth.mode none the gateway refuses other types, which any web page could send.",
  );
}

function crossSite(c: Context<GatewayEnv>, why: string): HttpError {
  return new HttpError(
    403,
    GatewayErrorCodes.CROSS_SITE_REQUEST,
    `refused a cross-site ${c.req.method} ${new URL(c.req.url).pathname}: ${why}. With auth.mode none, only the gateway's own pages and non-browser clients may call the API`,
    "Use the console the gateway serves, or a client such as curl or a script. To let another web app call the API, list its origin in cors.allow_origins, or use auth.mode api_keys.",
  );
}

/** Whether `origin` is the page origin of the gateway itself: the request's own Host, or an allowed_hosts name. */
export function isOwnOrigin(origin: string, host: string | undefined, isAllowedHost: (name: string) => boolean): boolean {
  let page: URL;
  try {
    page = new URL(origin);
  } catch {
    return false; // "null" (sandboxed frames, file: pages) and anything unparsable
  }
  if (page.protocol !== "http:" && page.protocol !== "https:") return false;
  if (isAllowedHost(hostNameOf(page.host))) return true;
  if (host === undefined) return false;
  try {
    // Parsed with the page's scheme, so a default port written out (`:80`) compares equal to none.
    return new URL(`${page.protocol}//${host}`).host === page.host;
  } catch {
    return false;
  }
}

function normalOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, "");
}
