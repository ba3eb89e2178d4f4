// A loopback server that speaks the part of Feishu's open API the channel uses (tenant_access_token, bot info,
// im/v1/messages create and patch, im/v1/files, message resources), with Feishu's `code`/`msg` answers and its
// frequency-limit error; and builders of event callbacks as Feishu sends them (plain or AES-256-CBC encrypted and
// signed).
import { createCipheriv, createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const APP_ID = "cli_loopback0001";
export const APP_SECRET = "loopback-app-secret";
export const BOT_OPEN_ID = "ou_bot0000000000000001";

export interface SentMessage {
  message_id: string;
  chat_id: string;
  msg_type: string;
  /** The content JSON as last set (create, then patches). */
  content: string;
  history: string[];
}

export interface ApiCall {
  method: string;
  path: string;
  status: number;
  traceId: string | null;
}

export class FakeFeishu {
  readonly messages: SentMessage[] = [];
  readonly calls: ApiCall[] = [];
  readonly files = new Map<string, { name: string; bytes: Buffer }>();
  /** Files users "sent": message id → file key → bytes. */
  readonly resources = new Map<string, Buffer>();
  private readonly tenantToken = `t-${randomUUID()}`;
  private failures: Array<{ op: string; seconds: number }> = [];
  private server: Server | undefined;
  private seq = 0;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.route(req, res).catch((err) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: 1, msg: String(err) }));
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

  chat(chatId: string): SentMessage[] {
    return this.messages.filter((m) => m.chat_id === chatId);
  }

  /** The next `op` (`create` or `patch`) is refused with Feishu's frequency limit (HTTP 429, code 99991400). */
  failNext(op: "create" | "patch", seconds: number): void {
    this.failures.push({ op, seconds });
  }

  /** A file a user attached to message `messageId`. */
  addResource(messageId: string, fileKey: string, bytes: Buffer): void {
    this.resources.set(`${messageId}/${fileKey}`, bytes);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const method = req.method ?? "GET";
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.calls.push({ method, path: url.pathname, status, traceId: (req.headers["x-trace-id"] as string | undefined) ?? null });
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
      res.end(JSON.stringify(body));
    };
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    if (url.pathname === "/open-apis/auth/v3/tenant_access_token/internal" && method === "POST") {
      const input = JSON.parse(raw.toString("utf8")) as { app_id?: string; app_secret?: string };
      if (input.app_id !== APP_ID || input.app_secret !== APP_SECRET) return send(200, { code: 10014, msg: "app secret invalid" });
      return send(200, { code: 0, msg: "ok", tenant_access_token: this.tenantToken, expire: 7200 });
    }
    if (req.headers.authorization !== `Bearer ${this.tenantToken}`) {
      return send(400, { code: 99991663, msg: "Invalid access token for authorization. Please make a request with token attached." });
    }
    const fail = (op: string) => {
      const at = this.failures.findIndex((f) => f.op === op);
      if (at < 0) return false;
      const [failure] = this.failures.splice(at, 1);
      send(
        429,
        { code: 99991400, msg: "request trigger frequency limit" },
        { "x-ogw-ratelimit-limit": "5", "x-ogw-ratelimit-reset": String(failure?.seconds ?? 1) },
      );
      return true;
    };
    if (url.pathname === "/open-apis/bot/v3/info" && method === "GET") {
      return send(200, { code: 0, msg: "ok", bot: { open_id: BOT_OPEN_ID, app_name: "Antler", activate_status: 2 } });
    }
    if (url.pathname === "/open-apis/im/v1/messages" && method === "POST") {
      if (fail("create")) return;
      if (url.searchParams.get("receive_id_type") !== "chat_id") return send(400, { code: 99992402, msg: "field validation failed" });
      const input = JSON.parse(raw.toString("utf8")) as { receive_id?: string; msg_type?: string; content?: string };
      if (!input.receive_id || !input.msg_type || typeof input.content !== "string") {
        return send(400, { code: 99992402, msg: "field validation failed" });
      }
      JSON.parse(input.content);
      const message: SentMessage = {
        message_id: `om_${++this.seq}`,
        chat_id: input.receive_id,
        msg_type: input.msg_type,
        content: input.content,
        history: [input.content],
      };
      this.messages.push(message);
      return send(200, { code: 0, msg: "success", data: { message_id: message.message_id, chat_id: message.chat_id } });
    }
    const patch = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(url.pathname);
    if (patch && method === "PATCH") {
      if (fail("patch")) return;
      const message = this.messages.find((m) => m.message_id === patch[1]);
      if (!message) return send(400, { code: 230001, msg: "message not found" });
      if (message.msg_type !== "interactive") return send(400, { code: 230001, msg: "only interactive messages can be patched" });
      const input = JSON.parse(raw.toString("utf8")) as { content?: string };
      if (typeof input.content !== "string") return send(400, { code: 99992402, msg: "field validation failed" });
      message.content = input.content;
      message.history.push(input.content);
      return send(200, { code: 0, msg: "success", data: {} });
    }
    if (url.pathname === "/open-apis/im/v1/files" && method === "POST") {
      const parts = multipart(raw, String(req.headers["content-type"] ?? ""));
      const file = parts.get("file");
      const name = parts.get("file_name")?.toString("utf8");
      if (!file || !name || parts.get("file_type")?.toString("utf8") !== "stream") return send(400, { code: 234001, msg: "invalid file" });
      const key = `file_v3_${++this.seq}`;
      this.files.set(key, { name, bytes: file });
      return send(200, { code: 0, msg: "success", data: { file_key: key } });
    }
    const resource = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/resources\/([^/]+)$/.exec(url.pathname);
    if (resource && method === "GET") {
      const bytes = this.resources.get(`${resource[1]}/${resource[2]}`);
      if (!bytes) return send(400, { code: 234003, msg: "file not in message" });
      this.calls.push({ method, path: url.pathname, status: 200, traceId: (req.headers["x-trace-id"] as string | undefined) ?? null });
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(bytes);
      return;
    }
    return send(404, { code: 404, msg: "not found" });
  }
}

/** The parts of a multipart/form-data body by name, as raw bytes (a file part may come without a filename). */
function multipart(body: Buffer, contentType: string): Map<string, Buffer> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const parts = new Map<string, Buffer>();
  if (!boundary) return parts;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length + 2; // past the boundary line's CRLF
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start, next - 2); // without the CRLF before the next boundary
    const split = part.indexOf("\r\n\r\n");
    const name = /name="([^"]+)"/.exec(part.subarray(0, split).toString("utf8"))?.[1];
    if (name && split >= 0) parts.set(name, Buffer.from(part.subarray(split + 4)));
    at = next;
  }
  return parts;
}

/** What a card shows: its Markdown and its buttons. */
export function readCard(content: string): { text: string; buttons: Array<{ label: string; value: string }> } {
  const card = JSON.parse(content) as { elements?: Array<Record<string, unknown>> };
  const text: string[] = [];
  const buttons: Array<{ label: string; value: string }> = [];
  for (const element of card.elements ?? []) {
    if (element.tag === "markdown") text.push(String(element.content));
    if (element.tag === "action") {
      for (const action of element.actions as Array<{ text: { content: string }; value: { v: string } }>) {
        buttons.push({ label: action.text.content, value: action.value.v });
      }
    }
  }
  return { text: text.join("\n"), buttons };
}

let eventSeq = 0;

function header(token: string, type: string) {
  return {
    event_id: `ev_${randomUUID().replaceAll("-", "")}`,
    event_type: type,
    create_time: String(Date.now()),
    token,
    app_id: APP_ID,
    tenant_key: "tenant_loopback",
  };
}

/** An `im.message.receive_v1` callback body (schema 2.0). */
export function messageEvent(
  token: string,
  options: {
    chatId: string;
    chatType: "p2p" | "group";
    openId: string;
    text?: string;
    mentionBot?: boolean;
    file?: { key: string; name: string };
  },
) {
  const messageId = `om_user_${++eventSeq}`;
  const mention = options.mentionBot ? [{ key: "@_user_1", id: { open_id: BOT_OPEN_ID, union_id: "on_bot" }, name: "Antler" }] : [];
  const content = options.file
    ? { message_type: "file", content: JSON.stringify({ file_key: options.file.key, file_name: options.file.name }) }
    : { message_type: "text", content: JSON.stringify({ text: `${options.mentionBot ? "@_user_1 " : ""}${options.text ?? ""}` }) };
  return {
    schema: "2.0",
    header: header(token, "im.message.receive_v1"),
    event: {
      sender: {
        sender_id: { open_id: options.openId, union_id: `on_${options.openId}` },
        sender_type: "user",
        tenant_key: "tenant_loopback",
      },
      message: {
        message_id: messageId,
        create_time: String(Date.now()),
        chat_id: options.chatId,
        chat_type: options.chatType,
        ...content,
        ...(mention.length > 0 ? { mentions: mention } : {}),
      },
    },
  };
}

/** A `card.action.trigger` callback body: a press of the button whose value is `{ v: value }`. */
export function cardActionEvent(token: string, options: { chatId: string; messageId: string; openId: string; value: string }) {
  return {
    schema: "2.0",
    header: header(token, "card.action.trigger"),
    event: {
      operator: { open_id: options.openId, union_id: `on_${options.openId}` },
      token: randomUUID(),
      action: { value: { v: options.value }, tag: "button" },
      host: "im_message",
      context: { open_message_id: options.messageId, open_chat_id: options.chatId },
    },
  };
}

/** The body Feishu posts with an encrypt key: `{ encrypt }`, AES-256-CBC under sha256(key), the IV first. */
export function encryptBody(encryptKey: string, body: unknown): string {
  const key = createHash("sha256").update(encryptKey).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv("aes-256-cbc", key, iv);
  const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(body), "utf8"), cipher.final()]);
  return JSON.stringify({ encrypt: sealed.toString("base64") });
}

/** The callback as the HTTP request Feishu makes: plain, or encrypted and signed (X-Lark-Signature). */
export function callbackRequest(
  url: string,
  body: unknown,
  options: { encryptKey?: string; signWith?: string; timestamp?: number; raw?: string } = {},
): Request {
  const text = options.raw ?? (options.encryptKey ? encryptBody(options.encryptKey, body) : JSON.stringify(body));
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signKey = options.signWith ?? options.encryptKey;
  if (signKey) {
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const nonce = randomUUID();
    headers["x-lark-request-timestamp"] = timestamp;
    headers["x-lark-request-nonce"] = nonce;
    headers["x-lark-signature"] = createHash("sha256")
      .update(timestamp + nonce + signKey + text)
      .digest("hex");
  }
  return new Request(url, { method: "POST", headers, body: text });
}
