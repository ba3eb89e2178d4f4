import { fetchWithTraceId, type Logger } from "@antler/kernel";
import {
  type ChannelProvider,
  ChannelRateLimitError,
  type ChannelSink,
  type ChatAddress,
  type InboundMessage,
  type OutboundMessage,
  type SentMessage,
} from "@antler/plugin-channels/contract";
import { Octokit } from "@octokit/rest";
import { Webhooks } from "@octokit/webhooks";
import type { GitHubConfig } from "./config.js";

export const GITHUB_PROVIDER_ID = "github";
/** GitHub refuses comment bodies over 65 536 characters; keep room for the live message's markers. */
const MAX_TEXT = 65_000;
/** GitHub's advice for a secondary rate limit that names no wait: at least a minute. */
const SECONDARY_LIMIT_WAIT_MS = 60_000;

/** What the channel reads of a comment or issue author. */
interface Author {
  login: string;
  id: number;
  type?: string;
}

/** The fields of `issue_comment` and `issues` deliveries the channel reads. */
interface IssueEventPayload {
  action?: string;
  issue?: { number: number; body?: string | null; user?: Author; pull_request?: unknown };
  comment?: { id: number; body?: string | null; user?: Author };
  repository?: { name: string; owner: { login: string } };
}

const unauthorized = (message: string) => Response.json({ error: { code: "ANTLER_ERR_CHANNEL_UNAUTHORIZED", message } }, { status: 401 });
const badEvent = (message: string) => Response.json({ error: { code: "ANTLER_ERR_CHANNEL_BAD_EVENT", message } }, { status: 400 });

/** An issue (or pull request) a chat id names: `owner/name#12`, or `12` in the configured `repository`. */
export interface IssueRef {
  owner: string;
  repo: string;
  issue_number: number;
}

export function parseIssueChat(chatId: string, repository?: string): IssueRef {
  const full = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)#(\d+)$/.exec(chatId);
  if (full) return { owner: full[1] as string, repo: full[2] as string, issue_number: Number(full[3]) };
  const bare = /^\d+$/.exec(chatId);
  if (bare && repository) {
    const [owner, repo] = repository.split("/") as [string, string];
    return { owner, repo, issue_number: Number(chatId) };
  }
  throw new Error(
    `github chat "${chatId}" is not an issue: write "owner/name#<number>"${repository ? "" : ", or set `repository` to use a bare number"}`,
  );
}

/** The wait a 403/429 asks for (Retry-After, then x-ratelimit-reset), or undefined when it is not a rate limit. */
export function rateLimitWaitMs(err: unknown, now = Date.now()): number | undefined {
  const e = err as { status?: unknown; message?: unknown; response?: { headers?: Record<string, string | number | undefined> } };
  if (e?.status !== 403 && e?.status !== 429) return undefined;
  const headers = e.response?.headers ?? {};
  const retryAfter = headers["retry-after"];
  if (retryAfter !== undefined && Number.isFinite(Number(retryAfter))) return Math.max(0, Number(retryAfter) * 1000);
  const reset = headers["x-ratelimit-reset"];
  if (String(headers["x-ratelimit-remaining"]) === "0" && reset !== undefined && Number.isFinite(Number(reset))) {
    return Math.max(0, Number(reset) * 1000 - now);
  }
  if (e.status === 429 || /rate limit/i.test(String(e.message ?? ""))) return SECONDARY_LIMIT_WAIT_MS;
  return undefined; // a 403 for missing permissions: not worth waiting for
}

export interface GitHubProviderOptions {
  config: GitHubConfig;
  logger?: Logger | undefined;
}

/**
 * The GitHub channel provider: `issue_comment` (and `issues` opened) deliveries verified with `@octokit/webhooks`,
 * answers posted and edited as issue comments with `@octokit/rest`. GitHub has no buttons: questions are numbered
 * lists, answered by a comment.
 */
export class GitHubProvider implements ChannelProvider {
  readonly id = GITHUB_PROVIDER_ID;
  readonly capabilities = { edits: true, buttons: false, files: false, maxTextLength: MAX_TEXT } as const;
  readonly octokit: Octokit;
  private readonly webhooks: Webhooks;
  private readonly config: GitHubConfig;
  private readonly logger: Logger | undefined;
  private readonly mention: RegExp;
  private readonly botLogin: string;
  /** When each comment was last written: an edit waits until `edit_interval_ms` has passed since. */
  private readonly lastWrite = new Map<string, number>();
  /** GitHub said to stop until then: calls before it fail at once instead of hitting the API again. */
  private blockedUntil = 0;

  constructor(options: GitHubProviderOptions) {
    this.config = options.config;
    this.logger = options.logger;
    this.botLogin = this.config.bot_login.replace(/\[bot\]$/, "");
    this.mention = new RegExp(`(^|[^\\w@/-])@${this.botLogin.replace(/[-[\]]/g, "\\$&")}(?![\\w-])`, "i");
    this.webhooks = new Webhooks({ secret: this.config.webhook_secret });
    const warn = (message: string) => this.logger?.warn({ provider: this.id }, message);
    const quiet = () => {};
    this.octokit = new Octokit({
      auth: this.config.token,
      baseUrl: this.config.api_url.replace(/\/+$/, ""),
      userAgent: "antler-channel-github",
      request: { fetch: fetchWithTraceId(globalThis.fetch) },
      log: { debug: quiet, info: quiet, warn, error: quiet },
    });
  }

  /** Verifies X-Hub-Signature-256 over the raw body before parsing it; journals the event; only then answers. */
  async webhook(request: Request, sink: ChannelSink): Promise<Response> {
    const signature = request.headers.get("x-hub-signature-256");
    if (!signature || !/^sha256=[0-9a-f]{64}$/i.test(signature)) {
      this.logger?.warn({ provider: this.id }, "github webhook refused: missing or malformed X-Hub-Signature-256");
      return unauthorized("missing or malformed X-Hub-Signature-256");
    }
    const body = await request.text();
    if (!(await this.webhooks.verify(body, signature).catch(() => false))) {
      this.logger?.warn({ provider: this.id }, "github webhook refused: bad signature");
      return unauthorized("X-Hub-Signature-256 does not match the body and the webhook secret");
    }
    const name = request.headers.get("x-github-event") ?? "";
    const delivery = request.headers.get("x-github-delivery") ?? "";
    if (name === "" || delivery === "") return badEvent("X-GitHub-Event and X-GitHub-Delivery are required");
    let payload: IssueEventPayload;
    try {
      payload = JSON.parse(body) as IssueEventPayload;
    } catch {
      return badEvent("the body is not JSON");
    }
    const message = this.toInbound(name, delivery, payload);
    if (message) await sink.accept(message);
    return new Response(null, { status: name === "ping" ? 200 : 202 });
  }

  /** A delivery as an inbound message; undefined for events, actions and authors the channel does not answer. */
  toInbound(name: string, delivery: string, payload: IssueEventPayload): InboundMessage | undefined {
    const { issue, repository } = payload;
    if (!issue || !repository) return undefined;
    let author: Author | undefined;
    let body: string;
    if (name === "issue_comment" && payload.action === "created" && payload.comment) {
      author = payload.comment.user;
      body = payload.comment.body ?? "";
    } else if (name === "issues" && payload.action === "opened") {
      author = issue.user;
      body = issue.body ?? "";
    } else {
      return undefined;
    }
    if (!author || this.isSelfOrBot(author)) return undefined;
    const mentioned = this.mention.test(body);
    const mentions = [...body.matchAll(/(?:^|[^\w@/-])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/g)].map((m) => m[1] as string);
    return {
      eventId: delivery,
      // No `workspace`: the chat id names the owner already, and a push (`deliver_to`) addresses a chat by its id alone.
      chat: { id: `${repository.owner.login}/${repository.name}#${issue.number}`, kind: "group" },
      sender: { id: String(author.id), name: author.login },
      // The mention addressed the bot; it is not part of what was asked (and `/connect` must lead the text).
      text: mentioned ? body.replace(this.mention, "$1").trim() : body,
      mentions,
      mentioned,
    };
  }

  private isSelfOrBot(author: Author): boolean {
    const login = author.login.replace(/\[bot\]$/, "").toLowerCase();
    return login === this.botLogin.toLowerCase() || author.type === "Bot";
  }

  async send(chat: ChatAddress, message: OutboundMessage): Promise<SentMessage> {
    const issue = parseIssueChat(chat.id, this.config.repository);
    const { data } = await this.call(() => this.octokit.rest.issues.createComment({ ...issue, body: message.text }));
    this.noteWrite(String(data.id));
    return { messageId: String(data.id) };
  }

  async edit(chat: ChatAddress, messageId: string, message: OutboundMessage): Promise<void> {
    const { owner, repo } = parseIssueChat(chat.id, this.config.repository);
    // Writes to one comment are spaced by `edit_interval_ms`: the runtime sends one edit at a time, so waiting here
    // bounds the rate without dropping the final text.
    const wait = (this.lastWrite.get(messageId) ?? 0) + this.config.edit_interval_ms - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.noteWrite(messageId);
    await this.call(() => this.octokit.rest.issues.updateComment({ owner, repo, comment_id: Number(messageId), body: message.text }));
  }

  private noteWrite(commentId: string): void {
    const now = Date.now();
    // Only recent writes matter; forget the rest so a long-lived process keeps a small map.
    if (this.lastWrite.size > 500) {
      for (const [id, at] of this.lastWrite) if (now - at > this.config.edit_interval_ms) this.lastWrite.delete(id);
    }
    this.lastWrite.set(commentId, now);
  }

  /** One REST call, refused at once while GitHub's rate limit holds; a 403/429 rate limit becomes `ChannelRateLimitError`. */
  private async call<T>(request: () => Promise<T>): Promise<T> {
    const wait = this.blockedUntil - Date.now();
    if (wait > 0) throw new ChannelRateLimitError(wait, `github rate limit: ${wait} ms left`);
    try {
      return await request();
    } catch (err) {
      const waitMs = rateLimitWaitMs(err);
      if (waitMs === undefined) throw err;
      this.blockedUntil = Date.now() + waitMs;
      throw new ChannelRateLimitError(waitMs, `github rate limit (HTTP ${(err as { status: number }).status}): retry after ${waitMs} ms`);
    }
  }

  async close(): Promise<void> {
    this.lastWrite.clear();
  }
}
