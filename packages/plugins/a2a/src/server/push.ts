import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { StreamResponse, type TaskPushNotificationConfig, type TaskState } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { Logger } from "@antler/kernel";
import { createGuardedFetch, createPinnedDispatcher, validatePublicHttpUrl } from "@antler/tools-web";
import type { A2APushConfigRow, A2APushConfigStore } from "./task-store.js";

/** `sha256=<hex>`: HMAC-SHA256 of the raw request body, keyed with the config's token. */
export const PUSH_SIGNATURE_HEADER = "X-A2A-Notification-Signature";
/** The config's token, as A2A's push notifications carry it (for receivers that compare tokens only). */
export const PUSH_TOKEN_HEADER = "X-A2A-Notification-Token";
/** One id per delivery, the same on each retry of it: a receiver drops the duplicates by it. */
export const PUSH_DELIVERY_HEADER = "X-A2A-Notification-Id";
export const PUSH_CONTENT_TYPE = "application/a2a+json";

export interface PushOptions {
  allowPrivateAddresses: boolean;
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  timeoutMs: number;
  maxConfigsPerTask: number;
  logger?: Logger | undefined;
}

/** The signature a receiver recomputes: `sha256=` and the hex HMAC-SHA256 of the body under the token. */
export function signPushBody(token: string, body: string): string {
  return `sha256=${createHmac("sha256", token).update(body).digest("hex")}`;
}

export function newPushToken(): string {
  return randomBytes(24).toString("base64url");
}

export function configOfRow(row: A2APushConfigRow): TaskPushNotificationConfig {
  return {
    tenant: "",
    id: row.config_id,
    taskId: row.task_id,
    url: row.url,
    token: row.token,
    authentication: row.auth_scheme && row.auth_credentials ? { scheme: row.auth_scheme, credentials: row.auth_credentials } : undefined,
  };
}

/** Whether a stream response is one a webhook gets: the task, and each change of its state (the final one included). */
export class PushFilter {
  private last: TaskState | undefined;

  accept(response: StreamResponse): boolean {
    const payload = response.payload;
    if (payload?.$case === "task") {
      this.last = payload.value.status?.state;
      return true;
    }
    if (payload?.$case !== "statusUpdate") return false;
    const state = payload.value.status?.state;
    if (state === this.last) return false;
    this.last = state;
    return true;
  }
}

const RETRYABLE = (status: number) => status >= 500 || status === 408 || status === 429;

/**
 * Push notifications of tasks: webhooks screened by the SSRF guard when registered and again on every delivery
 * (each connection's addresses too), deliveries signed with the config's token, retried with exponential backoff,
 * and kept in order per webhook. A delivery that never gets through is logged and dropped: the task goes on.
 */
export class PushNotifier {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly closed = new AbortController();
  private dispatcher: ReturnType<typeof createPinnedDispatcher> | undefined;

  constructor(
    readonly store: A2APushConfigStore,
    readonly options: PushOptions,
  ) {}

  /** Refuses a webhook URL the SSRF guard refuses, before anything is stored or started. */
  async screen(url: string): Promise<void> {
    const verdict = await validatePublicHttpUrl(url, { allowPrivateAddresses: this.options.allowPrivateAddresses });
    if (verdict.ok) return;
    throw new RequestMalformedError(
      `push notification URL refused: ${verdict.reason}. A webhook must be an http(s) URL on a public address` +
        (this.options.allowPrivateAddresses ? " (cloud metadata addresses are always refused)" : ""),
    );
  }

  /** Sends `response` to every webhook of the task, in the background. */
  notify(taskId: string, traceId: string, response: StreamResponse): void {
    if (this.closed.signal.aborted) return;
    const body = JSON.stringify(StreamResponse.toJSON(response));
    void this.store.list(taskId).then(
      (configs) => {
        for (const config of configs) this.enqueue(config, traceId, body);
      },
      (error: unknown) => this.options.logger?.warn(`push notifications of task ${taskId}: could not read the configs: ${String(error)}`),
    );
  }

  /** Resolves when every queued delivery is done (or given up). */
  async idle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  async close(): Promise<void> {
    this.closed.abort();
    await Promise.all([...this.chains.values()]);
    await this.dispatcher?.close().catch(() => undefined);
  }

  private enqueue(config: A2APushConfigRow, traceId: string, body: string): void {
    const key = `${config.task_id}\u0000${config.config_id}`;
    const next = (this.chains.get(key) ?? Promise.resolve()).then(() => this.deliver(config, traceId, body));
    this.chains.set(key, next);
    void next.finally(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  private async deliver(config: A2APushConfigRow, traceId: string, body: string): Promise<void> {
    this.dispatcher ??= createPinnedDispatcher({ allowPrivateAddresses: this.options.allowPrivateAddresses });
    const send = createGuardedFetch({
      allowPrivateAddresses: this.options.allowPrivateAddresses,
      traceId,
      dispatcher: this.dispatcher,
      maxRedirects: 0,
    });
    const headers: Record<string, string> = {
      "content-type": PUSH_CONTENT_TYPE,
      [PUSH_SIGNATURE_HEADER]: signPushBody(config.token, body),
      [PUSH_TOKEN_HEADER]: config.token,
      [PUSH_DELIVERY_HEADER]: randomUUID(),
    };
    if (config.auth_scheme && config.auth_credentials) headers.authorization = `${config.auth_scheme} ${config.auth_credentials}`;
    let wait = this.options.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      if (this.closed.signal.aborted) return;
      let outcome: string;
      try {
        const response = await send(config.url, {
          method: "POST",
          headers,
          body,
          signal: AbortSignal.any([this.closed.signal, AbortSignal.timeout(this.options.timeoutMs)]),
        });
        await response.body?.cancel().catch(() => undefined);
        if (response.ok) return;
        outcome = `HTTP ${response.status}`;
        if (!RETRYABLE(response.status)) {
          this.options.logger?.warn(`push notification to ${config.url} (task ${config.task_id}) refused with ${outcome}; not retried`);
          return;
        }
      } catch (error) {
        outcome = error instanceof Error ? error.message : String(error);
      }
      if (attempt >= this.options.maxAttempts) {
        this.options.logger?.warn(
          `push notification to ${config.url} (task ${config.task_id}) given up after ${attempt} attempts: ${outcome}`,
        );
        return;
      }
      await sleep(wait, undefined, { signal: this.closed.signal }).catch(() => undefined);
      wait = Math.min(wait * 2, this.options.maxBackoffMs);
    }
  }
}
