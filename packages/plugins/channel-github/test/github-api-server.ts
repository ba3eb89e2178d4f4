// A loopback server that speaks the part of GitHub's REST API the channel uses (issue comments: create, update,
// list), with GitHub's auth, error bodies and rate-limit headers; and a sender of signed webhook deliveries.
import { createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const BOT_LOGIN = "antler-bot";
const BOT_USER = { login: BOT_LOGIN, id: 9_000_001, type: "Bot" };

export interface Comment {
  id: number;
  owner: string;
  repo: string;
  issue: number;
  body: string;
  user: { login: string; id: number; type: string };
  /** Every body the comment had, oldest first. */
  history: string[];
  /** When each body was written (ms). */
  writtenAt: number[];
}

export interface ApiCall {
  method: string;
  path: string;
  status: number;
  traceId: string | null;
  at: number;
}

type Failure = { status: 403 | 429; headers: Record<string, string>; message: string };

export class FakeGitHub {
  readonly token = "ghp_loopbacktoken0123456789";
  readonly comments: Comment[] = [];
  readonly calls: ApiCall[] = [];
  private readonly failures = new Map<string, Failure[]>();
  private server: Server | undefined;
  private nextId = 1_000;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.route(req, res).catch((err) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: String(err) }));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }

  /** The bot's comments on an issue, oldest first. */
  issueComments(owner: string, repo: string, issue: number): Comment[] {
    return this.comments.filter((c) => c.owner === owner && c.repo === repo && c.issue === issue);
  }

  /** The next `op` (`create` or `update`) fails as GitHub rate-limits: 429 + Retry-After, or 403 + x-ratelimit-reset. */
  failNext(op: "create" | "update", form: { retryAfterSeconds: number } | { resetInSeconds: number }): void {
    const failure: Failure =
      "retryAfterSeconds" in form
        ? {
            status: 429,
            headers: { "retry-after": String(form.retryAfterSeconds) },
            message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
          }
        : {
            status: 403,
            headers: {
              "x-ratelimit-limit": "5000",
              "x-ratelimit-remaining": "0",
              "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + form.resetInSeconds),
            },
            message: "API rate limit exceeded for user ID 1.",
          };
    const list = this.failures.get(op) ?? [];
    list.push(failure);
    this.failures.set(op, list);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const method = req.method ?? "GET";
    const record = (status: number) =>
      this.calls.push({ method, path, status, traceId: (req.headers["x-trace-id"] as string | undefined) ?? null, at: Date.now() });
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      record(status);
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
      res.end(JSON.stringify(body));
    };
    const auth = req.headers.authorization ?? "";
    if (auth !== `token ${this.token}` && auth !== `bearer ${this.token}` && auth !== `Bearer ${this.token}`) {
      return json(401, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest", status: "401" });
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const input = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>) : {};
    const fail = (op: string) => {
      const failure = this.failures.get(op)?.shift();
      if (!failure) return false;
      json(failure.status, { message: failure.message, documentation_url: "https://docs.github.com/rest/rate-limit" }, failure.headers);
      return true;
    };
    const create = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(path);
    if (create && method === "POST") {
      if (fail("create")) return;
      if (typeof input.body !== "string" || input.body === "") return json(422, { message: "Validation Failed", status: "422" });
      if (input.body.length > 65_536) return json(422, { message: "Validation Failed: body is too long", status: "422" });
      const comment: Comment = {
        id: this.nextId++,
        owner: create[1] as string,
        repo: create[2] as string,
        issue: Number(create[3]),
        body: input.body,
        user: BOT_USER,
        history: [input.body],
        writtenAt: [Date.now()],
      };
      this.comments.push(comment);
      return json(201, this.view(comment));
    }
    if (create && method === "GET") {
      return json(
        200,
        this.issueComments(create[1] as string, create[2] as string, Number(create[3])).map((c) => this.view(c)),
      );
    }
    const update = /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/.exec(path);
    if (update && method === "PATCH") {
      if (fail("update")) return;
      const comment = this.comments.find((c) => c.id === Number(update[3]) && c.owner === update[1] && c.repo === update[2]);
      if (!comment) return json(404, { message: "Not Found", status: "404" });
      if (typeof input.body !== "string" || input.body === "") return json(422, { message: "Validation Failed", status: "422" });
      comment.body = input.body;
      comment.history.push(input.body);
      comment.writtenAt.push(Date.now());
      return json(200, this.view(comment));
    }
    return json(404, { message: "Not Found", status: "404" });
  }

  private view(c: Comment) {
    return {
      id: c.id,
      node_id: `IC_${c.id}`,
      url: `${this.url}/repos/${c.owner}/${c.repo}/issues/comments/${c.id}`,
      html_url: `https://github.com/${c.owner}/${c.repo}/issues/${c.issue}#issuecomment-${c.id}`,
      issue_url: `${this.url}/repos/${c.owner}/${c.repo}/issues/${c.issue}`,
      body: c.body,
      user: c.user,
      created_at: new Date(c.writtenAt[0] ?? Date.now()).toISOString(),
      updated_at: new Date(c.writtenAt.at(-1) ?? Date.now()).toISOString(),
      author_association: "NONE",
    };
  }
}

export interface Delivery {
  id: string;
  name: string;
  body: string;
  signature: string;
}

let nextCommentId = 5_000_000;

/** An `issue_comment` `created` delivery, as GitHub sends it, signed with `secret`. */
export function commentDelivery(
  secret: string,
  options: {
    owner?: string;
    repo?: string;
    issue: number;
    user: { login: string; id: number; type?: string };
    body: string;
    pullRequest?: boolean;
  },
): Delivery {
  const owner = options.owner ?? "octo";
  const repo = options.repo ?? "demo";
  const payload = {
    action: "created",
    issue: {
      number: options.issue,
      title: `Issue ${options.issue}`,
      body: "",
      user: { login: "someone", id: 1, type: "User" },
      ...(options.pullRequest ? { pull_request: { url: `https://api.github.com/repos/${owner}/${repo}/pulls/${options.issue}` } } : {}),
    },
    comment: { id: nextCommentId++, body: options.body, user: { type: "User", ...options.user } },
    repository: { id: 77, name: repo, full_name: `${owner}/${repo}`, owner: { login: owner, id: 5 } },
    sender: { type: "User", ...options.user },
  };
  return sign(secret, "issue_comment", payload);
}

export function sign(secret: string, name: string, payload: unknown, id: string = randomUUID()): Delivery {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  return { id, name, body, signature };
}

/** The delivery as the HTTP request GitHub makes. */
export function deliveryRequest(url: string, delivery: Delivery, signature: string | null = delivery.signature): Request {
  return new Request(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/loopback",
      "x-github-event": delivery.name,
      "x-github-delivery": delivery.id,
      ...(signature === null ? {} : { "x-hub-signature-256": signature }),
    },
    body: delivery.body,
  });
}
