// A loopback server that speaks Slack's Web API over HTTP (the methods a bot uses: auth.test, chat.postMessage,
// chat.update, files.getUploadURLExternal + the upload URL + files.completeUploadExternal, files.info + the private
// download URL, apps.connections.open) and Socket Mode over WebSocket (hello, envelopes, acks), with Slack's wire
// formats: form-encoded (or JSON) bodies with a Bearer token, `{ ok, ... }` answers, HTTP 429 with Retry-After.
// It also signs Events API / interaction / slash command requests the way Slack does, for webhook tests.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { slackSignature } from "../src/index.js";

export const BOT_USER = "UBOT0001";
export const TEAM = "T0TEAM01";
export const BOT_TOKEN = "xoxb-1111-2222-testtoken";
export const APP_TOKEN = "xapp-1-A111-222-testapptoken";
export const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

export interface ApiCall {
  method: string;
  params: Record<string, unknown>;
  traceId: string | null;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** The HTTP status it was answered with. */
  status: number;
}

export interface SlackMessage {
  ts: string;
  channel: string;
  thread_ts: string | undefined;
  text: string;
  blocks: Array<Record<string, unknown>>;
  /** A file the bot shared (files.completeUploadExternal). */
  file?: { id: string; name: string; bytes: Buffer } | undefined;
  /** Every text the message showed, in order (edits included). */
  history: string[];
}

export interface SlackHostedFile {
  id: string;
  name: string;
  mimetype: string;
  size: number;
  bytes: Buffer;
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });

/** A form field as Slack's SDK sends it: objects and arrays JSON-encoded. */
function fieldValue(value: string): unknown {
  if (/^[[{]/.test(value)) {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

export class FakeSlack {
  readonly calls: ApiCall[] = [];
  readonly messages: SlackMessage[] = [];
  /** Reactions the bot added: `<channel>:<ts>:<name>`. */
  readonly reactions: string[] = [];
  readonly ephemeral: Array<{ url: string; body: Record<string, unknown> }> = [];
  /** Envelope ids the Socket Mode client acknowledged. */
  readonly acks: string[] = [];
  private readonly hosted = new Map<string, SlackHostedFile>();
  private readonly uploads = new Map<string, { name: string; bytes?: Buffer }>();
  private readonly failures: Array<{ method: string; retryAfter: number }> = [];
  private readonly sockets = new Set<WebSocket>();
  private socketWaiters: Array<() => void> = [];
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private clock = 1_700_000_000;
  private seq = 0;
  url = "";

  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((err) => {
        console.error("fake slack failed", err);
        res.writeHead(500).end(String(err));
      });
    });
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on("upgrade", (req, socket, head) => {
      if (!req.url?.startsWith("/link")) return void socket.destroy();
      this.wss?.handleUpgrade(req, socket, head, (ws) => {
        this.sockets.add(ws);
        ws.on("message", (data) => {
          const frame = JSON.parse(String(data)) as { envelope_id?: string };
          if (frame.envelope_id) this.acks.push(frame.envelope_id);
        });
        ws.on("close", () => this.sockets.delete(ws));
        ws.send(JSON.stringify({ type: "hello", num_connections: 1, connection_info: { app_id: "A111" }, debug_info: { host: "fake" } }));
        for (const wake of this.socketWaiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss?.close();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** The next call of `method` answers HTTP 429 with `Retry-After: retryAfter`. */
  failNext(method: string, retryAfter: number): void {
    this.failures.push({ method, retryAfter });
  }

  /** A message ts, increasing like Slack's. */
  ts(): string {
    this.seq += 1;
    return `${this.clock + this.seq}.${String(this.seq).padStart(6, "0")}`;
  }

  /** A file a user shared: its id for a file_share event. */
  hostFile(name: string, bytes: Buffer, mimetype = "text/plain"): SlackHostedFile {
    const file = { id: `F${String(this.hosted.size + 1).padStart(8, "0")}`, name, mimetype, size: bytes.length, bytes };
    this.hosted.set(file.id, file);
    return file;
  }

  channel(id: string): SlackMessage[] {
    return this.messages.filter((m) => m.channel === id);
  }

  /** Waits until a Socket Mode client is connected. */
  async connected(): Promise<void> {
    if (this.sockets.size > 0) return;
    await new Promise<void>((resolve) => this.socketWaiters.push(resolve));
  }

  /** Sends an envelope to the connected Socket Mode clients (as Slack does; again with `retry_attempt` on a retry). */
  async envelope(envelope: { envelope_id: string; type: string; payload: unknown; retry_attempt?: number }): Promise<void> {
    await this.connected();
    const frame = JSON.stringify({ accepts_response_payload: false, retry_attempt: 0, retry_reason: "", ...envelope });
    for (const ws of this.sockets) ws.send(frame);
  }

  /** Waits until the envelope is acknowledged. */
  async acked(envelopeId: string, timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!this.acks.includes(envelopeId)) {
      if (Date.now() > until) throw new Error(`envelope ${envelopeId} was not acknowledged`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** A request to the webhook as Slack sends it: signed with the signing secret (or `secret`) at `timestamp`. */
  signedRequest(
    body: string,
    contentType: string,
    options: { secret?: string; timestamp?: number; headers?: Record<string, string> } = {},
  ): Request {
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    return new Request("http://127.0.0.1/channels/slack/webhook", {
      method: "POST",
      headers: {
        "content-type": contentType,
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": slackSignature(options.secret ?? SIGNING_SECRET, timestamp, body),
        ...options.headers,
      },
      body,
    });
  }

  eventRequest(payload: unknown, options?: Parameters<FakeSlack["signedRequest"]>[2]): Request {
    return this.signedRequest(JSON.stringify(payload), "application/json", options);
  }

  formRequest(fields: Record<string, string>, options?: Parameters<FakeSlack["signedRequest"]>[2]): Request {
    return this.signedRequest(new URLSearchParams(fields).toString(), "application/x-www-form-urlencoded", options);
  }

  private json(res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    const body = await readBody(req);
    const auth = req.headers.authorization ?? "";
    if (url.pathname.startsWith("/upload/")) {
      const upload = this.uploads.get(url.pathname.slice("/upload/".length));
      if (!upload) return void res.writeHead(404).end();
      upload.bytes = body;
      return void res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${body.length}`);
    }
    if (url.pathname.startsWith("/files-pri/")) {
      if (auth !== `Bearer ${BOT_TOKEN}`) return void res.writeHead(403).end();
      const file = this.hosted.get(url.pathname.split("/")[2] ?? "");
      if (!file) return void res.writeHead(404).end();
      return void res.writeHead(200, { "content-type": file.mimetype }).end(file.bytes);
    }
    if (url.pathname.startsWith("/respond/")) {
      this.ephemeral.push({ url: url.pathname, body: JSON.parse(String(body)) as Record<string, unknown> });
      return void res.writeHead(200).end("ok");
    }
    if (!url.pathname.startsWith("/api/")) return void res.writeHead(404).end();
    const method = url.pathname.slice("/api/".length);
    const params: Record<string, unknown> = {};
    if ((req.headers["content-type"] ?? "").includes("application/json")) Object.assign(params, JSON.parse(String(body) || "{}"));
    else for (const [k, v] of new URLSearchParams(String(body))) params[k] = fieldValue(v);
    const traceHeader = req.headers["x-trace-id"];
    const call: ApiCall = { method, params, traceId: typeof traceHeader === "string" ? traceHeader : null, at: Date.now(), status: 200 };
    this.calls.push(call);
    const failure = this.failures.findIndex((f) => f.method === method);
    if (failure >= 0) {
      const [f] = this.failures.splice(failure, 1);
      call.status = 429;
      return this.json(res, { ok: false, error: "ratelimited" }, 429, { "retry-after": String(f?.retryAfter ?? 1) });
    }
    const token = method === "apps.connections.open" ? APP_TOKEN : BOT_TOKEN;
    if (auth !== `Bearer ${token}`) return this.json(res, { ok: false, error: "invalid_auth" });
    this.json(res, this.answer(method, params));
  }

  private answer(method: string, p: Record<string, unknown>): Record<string, unknown> {
    switch (method) {
      case "auth.test":
        return { ok: true, user_id: BOT_USER, team_id: TEAM, bot_id: "B0001", user: "antler" };
      case "apps.connections.open":
        return { ok: true, url: `${this.url.replace(/^http/, "ws")}/link/?ticket=t${++this.seq}` };
      case "chat.postMessage": {
        const message: SlackMessage = {
          ts: this.ts(),
          channel: String(p.channel),
          thread_ts: typeof p.thread_ts === "string" ? p.thread_ts : undefined,
          text: String(p.text ?? ""),
          blocks: (p.blocks as SlackMessage["blocks"] | undefined) ?? [],
          history: [String(p.text ?? "")],
        };
        this.messages.push(message);
        return { ok: true, channel: message.channel, ts: message.ts, message: { text: message.text, ts: message.ts } };
      }
      case "chat.update": {
        const message = this.messages.find((m) => m.channel === p.channel && m.ts === p.ts);
        if (!message) return { ok: false, error: "message_not_found" };
        message.text = String(p.text ?? "");
        if (p.blocks !== undefined) message.blocks = p.blocks as SlackMessage["blocks"];
        message.history.push(message.text);
        return { ok: true, channel: message.channel, ts: message.ts, text: message.text };
      }
      case "reactions.add": {
        const key = `${p.channel}:${p.timestamp}:${p.name}`;
        if (this.reactions.includes(key)) return { ok: false, error: "already_reacted" };
        this.reactions.push(key);
        return { ok: true };
      }
      case "files.getUploadURLExternal": {
        const id = `F${String(900 + this.uploads.size)}UP`;
        this.uploads.set(id, { name: String(p.filename) });
        return { ok: true, upload_url: `${this.url}/upload/${id}`, file_id: id };
      }
      case "files.completeUploadExternal": {
        const files = p.files as Array<{ id: string; title?: string }>;
        const done = [];
        for (const f of files) {
          const upload = this.uploads.get(f.id);
          if (!upload?.bytes) return { ok: false, error: "file_not_found" };
          this.messages.push({
            ts: this.ts(),
            channel: String(p.channel_id),
            thread_ts: typeof p.thread_ts === "string" ? p.thread_ts : undefined,
            text: "",
            blocks: [],
            file: { id: f.id, name: upload.name, bytes: upload.bytes },
            history: [],
          });
          done.push({ id: f.id, title: f.title ?? upload.name });
        }
        return { ok: true, files: done };
      }
      case "files.info": {
        const file = this.hosted.get(String(p.file));
        if (!file) return { ok: false, error: "file_not_found" };
        return {
          ok: true,
          file: {
            id: file.id,
            name: file.name,
            mimetype: file.mimetype,
            size: file.size,
            url_private: `${this.url}/files-pri/${file.id}/${file.name}`,
            url_private_download: `${this.url}/files-pri/${file.id}/download/${file.name}`,
          },
        };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }
}

/** The Events API callback of a user's message. */
export function messageEvent(
  slack: FakeSlack,
  event: { channel: string; user: string; text: string; thread_ts?: string; files?: SlackHostedFile[]; type?: string },
): { event_id: string; ts: string; payload: Record<string, unknown> } {
  const ts = slack.ts();
  const eventId = `Ev${ts.replace(".", "")}`;
  const channelType = event.channel.startsWith("D") ? "im" : "channel";
  const payload = {
    token: "verification-token-unused",
    team_id: TEAM,
    api_app_id: "A111",
    type: "event_callback",
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: event.type ?? "message",
      channel: event.channel,
      channel_type: channelType,
      user: event.user,
      text: event.text,
      ts,
      team: TEAM,
      ...(event.thread_ts ? { thread_ts: event.thread_ts } : {}),
      ...(event.files
        ? {
            subtype: "file_share",
            files: event.files.map((f) => ({ id: f.id, name: f.name, mimetype: f.mimetype, size: f.size })),
          }
        : {}),
    },
  };
  return { event_id: eventId, ts, payload };
}

/** The block_actions payload of a press on a button of the bot's message. */
export function blockActions(slack: FakeSlack, message: SlackMessage, value: string, user: string): Record<string, unknown> {
  const button = message.blocks
    .flatMap((b) => (b.type === "actions" ? (b.elements as Array<{ action_id: string; value: string }>) : []))
    .find((e) => e.value === value);
  if (!button) throw new Error(`no button with value ${value} under message ${message.ts}`);
  return {
    type: "block_actions",
    user: { id: user, username: `user${user}`, team_id: TEAM },
    api_app_id: "A111",
    team: { id: TEAM },
    container: { type: "message", message_ts: message.ts, channel_id: message.channel, is_ephemeral: false },
    trigger_id: `trig.${slack.ts()}`,
    channel: { id: message.channel, name: "chat" },
    message: { type: "message", ts: message.ts, text: message.text, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) },
    response_url: `${slack.url}/respond/${message.ts}`,
    actions: [{ type: "button", action_id: button.action_id, block_id: "b", value, action_ts: slack.ts() }],
  };
}

/** The buttons under a message, as Block Kit holds them. */
export function buttonsOf(message: SlackMessage): Array<{ label: string; value: string; style?: string }> {
  return message.blocks.flatMap((b) =>
    b.type === "actions"
      ? (b.elements as Array<{ text: { text: string }; value: string; style?: string }>).map((e) => ({
          label: e.text.text,
          value: e.value,
          ...(e.style ? { style: e.style } : {}),
        }))
      : [],
  );
}
