import { AntlerError, ErrorCodes } from "@antler/kernel";
import { TENKI_KEY_ENVS } from "./config.js";

export const CONTROL_SERVICE = "tenki.sandbox.v1.SandboxService";
export const DATA_SERVICE = "tenki.sandbox.v1.SandboxSessionDataPlaneService";
/** The header that carries a session credential on data-plane calls (as Tenki's SDKs send it). */
export const SESSION_CERT_HEADER = "x-tenki-session-cert";

export interface TenkiApiOptions {
  apiUrl: string;
  /** The API key, read on each call. */
  apiKey: () => string | undefined;
  requestTimeoutMs: number;
  maxRetries: number;
  /** First retry delay; doubles per attempt. Default 250 ms. */
  retryBaseMs?: number;
  where: string;
}

export interface CallOptions {
  /** Overrides request_timeout_ms (a command's call lasts as long as the command). */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

/** A ConnectRPC error: `{ code, message }` with the matching HTTP status. */
export class TenkiCallError extends Error {
  override readonly name = "TenkiCallError";
  constructor(
    readonly method: string,
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`Tenki ${method}: ${status}${code ? ` ${code}` : ""}${message ? `: ${message}` : ""}`);
  }
}

/** Calls safe to repeat after a transient failure: reads, and writes whose repetition lands in the same state. */
const IDEMPOTENT = /^(Get|List|Stat|Read|Wait|CreateSessionCredential$|TerminateSession$|WriteFile$|Mkdir$|Remove$)/;
const TRANSIENT_CODES = new Set(["unavailable", "deadline_exceeded"]);
const RATE_LIMITED = new Set(["resource_exhausted", "rate_limited"]);

/** Tenki picks the auth scheme by the token's prefix: `tk_` API keys are bearer tokens. */
export function authHeaders(token: string): Record<string, string> {
  const t = token.trim();
  if (t.startsWith("tk_")) return { authorization: `Bearer ${t}` };
  if (t.startsWith("ory_st_")) return { "x-session-token": t };
  return { cookie: `tenki_session=${t}` };
}

interface Credential {
  endpoint: string;
  token: string;
  expiresAt: number;
}

/**
 * Tenki's ConnectRPC API in its JSON form: every call is `POST <base>/<service>/<Method>` with a JSON body. The
 * control plane (sessions, commands) is at `api_url` under the caller's key; each session's files are on a data
 * plane whose endpoint and short-lived credential come from `CreateSessionCredential`, cached here until shortly
 * before they expire and minted again when the data plane refuses them.
 */
export class TenkiApi {
  private readonly credentials = new Map<string, Credential>();

  constructor(readonly options: TenkiApiOptions) {}

  requireKey(): string {
    const key = this.options.apiKey();
    if (key) return key;
    throw new AntlerError(
      ErrorCodes.CONFIG_ENV_MISSING,
      `no Tenki API key: ${TENKI_KEY_ENVS.join(" and ")} are not set and api_key is not configured`,
      {
        where: `${this.options.where}.api_key`,
        hint: `Export TENKI_API_KEY=tk_... (an API key from the Tenki console) or set api_key: \${TENKI_API_KEY} in the plugin config.`,
      },
    );
  }

  control<T>(method: string, body: Record<string, unknown>, options: CallOptions = {}): Promise<T> {
    return this.call<T>(
      `${this.options.apiUrl.replace(/\/+$/, "")}/${CONTROL_SERVICE}/${method}`,
      method,
      body,
      authHeaders(this.requireKey()),
      options,
    );
  }

  /** A data-plane call for `sessionId`; `request` is wrapped as `{ request: { sessionId, ... } }`, the answer unwrapped. */
  async data<T>(sessionId: string, method: string, request: Record<string, unknown>, options: CallOptions = {}): Promise<T> {
    for (let fresh = false; ; fresh = true) {
      const credential = await this.credential(sessionId, options.signal);
      try {
        const answer = await this.call<{ response?: T }>(
          `${credential.endpoint.replace(/\/+$/, "")}/${DATA_SERVICE}/${method}`,
          method,
          { request: { sessionId, ...request } },
          { [SESSION_CERT_HEADER]: credential.token },
          options,
        );
        return (answer.response ?? {}) as T;
      } catch (err) {
        // A credential can be revoked or expire early; mint one more before giving up.
        if (!fresh && err instanceof AntlerError && (err.details.status === 401 || err.details.status === 403)) {
          this.credentials.delete(sessionId);
          continue;
        }
        throw err;
      }
    }
  }

  forget(sessionId: string): void {
    this.credentials.delete(sessionId);
  }

  private async credential(sessionId: string, signal: AbortSignal | undefined): Promise<Credential> {
    const cached = this.credentials.get(sessionId);
    if (cached && cached.expiresAt > Date.now()) return cached;
    const answer = await this.control<{ credential?: { credential?: string; expiresAt?: string }; dataPlaneEndpoint?: string }>(
      "CreateSessionCredential",
      { sessionId },
      { signal },
    );
    if (!answer.credential?.credential || !answer.dataPlaneEndpoint) {
      throw new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `Tenki gave no data-plane endpoint or credential for session ${sessionId}`, {
        where: this.options.where,
        hint: "The session may still be starting; try again, or check the session in the Tenki console.",
      });
    }
    const stated = answer.credential.expiresAt ? Date.parse(answer.credential.expiresAt) : Number.NaN;
    // Renewed 30 s early so a call never straddles the expiry; one without a stated expiry is kept a minute.
    const expiresAt = Number.isNaN(stated) ? Date.now() + 60_000 : Math.max(Date.now() + 5_000, stated - 30_000);
    const credential = { endpoint: answer.dataPlaneEndpoint, token: answer.credential.credential, expiresAt };
    this.credentials.set(sessionId, credential);
    return credential;
  }

  private async call<T>(url: string, method: string, body: unknown, auth: Record<string, string>, options: CallOptions): Promise<T> {
    const attempts = this.options.maxRetries + 1;
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs;
    const idempotent = IDEMPOTENT.test(method);
    let last: TenkiCallError | Error | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      options.signal?.throwIfAborted();
      if (attempt > 1) await sleep((this.options.retryBaseMs ?? 250) * 2 ** (attempt - 2), options.signal);
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", "connect-protocol-version": "1", ...auth },
          body: JSON.stringify(body),
          signal: options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        last = new Error(
          (err as Error)?.name === "TimeoutError"
            ? `no answer within ${timeoutMs} ms (request_timeout_ms)`
            : ((err as Error)?.message ?? String(err)),
        );
        // The call may have reached Tenki: only an idempotent one is sent again.
        if (idempotent) continue;
        break;
      }
      if (response.ok) return (await response.json()) as T;
      const text = await response.text().catch(() => "");
      let code = "";
      let message = text.trim().slice(0, 300);
      try {
        const parsed = JSON.parse(text) as { code?: string; message?: string };
        code = (parsed.code ?? "").toLowerCase();
        message = parsed.message ?? "";
      } catch {
        // not a Connect error body
      }
      last = new TenkiCallError(method, response.status, code, message);
      if (response.status === 429 || RATE_LIMITED.has(code)) continue;
      if (idempotent && (TRANSIENT_CODES.has(code) || response.status === 502 || response.status === 503 || response.status === 504))
        continue;
      break;
    }
    throw this.failure(method, last, attempts);
  }

  private failure(method: string, err: TenkiCallError | Error | undefined, attempts: number): AntlerError {
    if (err instanceof TenkiCallError) {
      if (err.status === 401 || err.code === "unauthenticated" || err.status === 403 || err.code === "permission_denied") {
        return new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, `Tenki refused the credentials (${err.message})`, {
          where: `${this.options.where}.api_key`,
          hint: "Set TENKI_API_KEY (or api_key) to a valid tk_ API key with access to the project.",
          details: { status: err.status, code: err.code },
          cause: err,
        });
      }
      if (err.status === 404 || err.code === "not_found") {
        return new AntlerError(ErrorCodes.SANDBOX_NOT_FOUND, err.message, {
          where: this.options.where,
          details: { status: err.status },
          cause: err,
        });
      }
      return new AntlerError(ErrorCodes.SANDBOX_UNAVAILABLE, err.message, {
        where: this.options.where,
        details: { status: err.status, code: err.code },
        cause: err,
      });
    }
    return new AntlerError(
      ErrorCodes.SANDBOX_UNAVAILABLE,
      `Tenki ${method} failed${attempts > 1 ? ` (up to ${attempts} attempts)` : ""}: ${err?.message ?? "no answer"}`,
      {
        where: this.options.where,
        hint: `Check that ${this.options.apiUrl} is reachable; request_timeout_ms and max_retries tune the waiting.`,
        cause: err,
      },
    );
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
