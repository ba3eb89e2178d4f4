// A loopback server that speaks the Telegram Bot API over HTTP (the subset a bot uses: getMe, getUpdates,
// sendMessage, editMessageText, sendDocument, getFile + file download, answerCallbackQuery, sendChatAction,
// deleteWebhook), with the wire formats Telegram uses: JSON or multipart bodies, `{ ok, result }` answers, and
// `{ ok: false, error_code: 429, parameters: { retry_after } }` when told to rate-limit.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const BOT = { id: 7_000_001, is_bot: true, first_name: "Antler", username: "antler_test_bot" } as const;

export interface BotApiCall {
  method: string;
  params: Record<string, unknown>;
  /** The `X-Trace-Id` header the call carried. */
  traceId: string | null;
}

export interface ChatMessage {
  message_id: number;
  chat_id: string;
  text: string | undefined;
  parse_mode: string | undefined;
  reply_markup: { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> } | undefined;
  document?: { file_name: string; bytes: Buffer } | undefined;
  /** Every text the message showed, in order (edits included). */
  history: string[];
}

type Update = Record<string, unknown> & { update_id: number };

export class FakeTelegram {
  readonly token = "123456:TEST-token_abcdefghijklmnop";
  readonly calls: BotApiCall[] = [];
  readonly messages: ChatMessage[] = [];
  readonly chatTypes = new Map<string, string>();
  private readonly files = new Map<string, { path: string; bytes: Buffer; name: string }>();
  private readonly failures: Array<{ method: string; retryAfter: number }> = [];
  private readonly queue: Update[] = [];
  private waiters: Array<() => void> = [];
  private nextMessageId = 100;
  private nextUpdateId = 1000;
  private server: Server | undefined;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch((err) => {
        console.error("fake telegram failed", err);
        res.writeHead(500).end(String(err));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const wake of this.waiters) wake();
    this.waiters = [];
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** The next call of `method` answers 429 with `retry_after`. */
  failNext(method: string, retryAfter: number): void {
    this.failures.push({ method, retryAfter });
  }

  /** A file Telegram holds, as a `file_id` for a document message. */
  addFile(name: string, bytes: Buffer): { file_id: string; file_unique_id: string; file_size: number; file_name: string } {
    const id = `file-${this.files.size + 1}`;
    this.files.set(id, { path: `documents/${id}-${name}`, bytes, name });
    return { file_id: id, file_unique_id: `u${id}`, file_size: bytes.length, file_name: name };
  }

  /** A new update id (Telegram's counter). */
  updateId(): number {
    return this.nextUpdateId++;
  }

  /** Queues an update for getUpdates (long polling). */
  queueUpdate(update: Update): void {
    this.queue.push(update);
    for (const wake of this.waiters.splice(0)) wake();
  }

  callsOf(method: string): BotApiCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** The bot's messages in a chat, oldest first. */
  chat(chatId: string | number): ChatMessage[] {
    return this.messages.filter((m) => m.chat_id === String(chatId));
  }

  rememberChat(chatId: string | number, type: string): void {
    this.chatTypes.set(String(chatId), type);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    const filePrefix = `/file/bot${this.token}/`;
    if (url.pathname.startsWith(filePrefix)) {
      const path = decodeURIComponent(url.pathname.slice(filePrefix.length));
      const file = [...this.files.values()].find((f) => f.path === path);
      if (!file) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(file.bytes);
      return;
    }
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) return void res.writeHead(404).end();
    if (match[1] !== this.token) return this.reply(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = match[2] as string;
    const params = await readParams(req);
    this.calls.push({ method, params, traceId: (req.headers["x-trace-id"] as string | undefined) ?? null });
    const failure = this.failures.findIndex((f) => f.method === method);
    if (failure >= 0) {
      const { retryAfter } = this.failures.splice(failure, 1)[0] as { retryAfter: number };
      return this.reply(res, 429, {
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${retryAfter}`,
        parameters: { retry_after: retryAfter },
      });
    }
    const ok = (result: unknown) => this.reply(res, 200, { ok: true, result });
    const bad = (description: string) => this.reply(res, 400, { ok: false, error_code: 400, description: `Bad Request: ${description}` });
    switch (method) {
      case "getMe":
        return ok(BOT);
      case "deleteWebhook":
      case "answerCallbackQuery":
      case "sendChatAction":
        return ok(true);
      case "getUpdates":
        return ok(await this.updates(Number(params.offset ?? 0), Number(params.timeout ?? 0), req));
      case "sendMessage": {
        const message = this.post(String(params.chat_id), {
          text: String(params.text),
          parse_mode: params.parse_mode as string | undefined,
          reply_markup: params.reply_markup as ChatMessage["reply_markup"],
        });
        return ok(this.wire(message));
      }
      case "editMessageText": {
        const message = this.messages.find((m) => m.chat_id === String(params.chat_id) && m.message_id === Number(params.message_id));
        if (!message) return bad("message to edit not found");
        const markup = params.reply_markup as ChatMessage["reply_markup"];
        const sameMarkup = JSON.stringify(markup?.inline_keyboard ?? []) === JSON.stringify(message.reply_markup?.inline_keyboard ?? []);
        if (message.text === params.text && sameMarkup) {
          return bad("message is not modified: specified new message content and reply markup are exactly the same");
        }
        message.text = String(params.text);
        message.parse_mode = params.parse_mode as string | undefined;
        message.reply_markup = markup?.inline_keyboard?.length ? markup : undefined;
        message.history.push(message.text);
        return ok(this.wire(message));
      }
      case "sendDocument": {
        const doc = params.document as { name: string; bytes: Buffer } | undefined;
        if (!doc) return bad("there is no document in the request");
        const message = this.post(String(params.chat_id), { text: undefined, document: { file_name: doc.name, bytes: doc.bytes } });
        return ok(this.wire(message));
      }
      case "getFile": {
        const file = this.files.get(String(params.file_id));
        if (!file) return bad("invalid file_id");
        return ok({ file_id: params.file_id, file_unique_id: `u${params.file_id}`, file_size: file.bytes.length, file_path: file.path });
      }
      default:
        return this.reply(res, 404, { ok: false, error_code: 404, description: "Not Found: method not found" });
    }
  }

  private post(chatId: string, fields: Partial<ChatMessage>): ChatMessage {
    const message: ChatMessage = {
      message_id: this.nextMessageId++,
      chat_id: chatId,
      text: fields.text,
      parse_mode: fields.parse_mode,
      reply_markup: fields.reply_markup?.inline_keyboard?.length ? fields.reply_markup : undefined,
      document: fields.document,
      history: fields.text === undefined ? [] : [fields.text],
    };
    this.messages.push(message);
    return message;
  }

  private wire(message: ChatMessage): Record<string, unknown> {
    const type = this.chatTypes.get(message.chat_id) ?? "private";
    return {
      message_id: message.message_id,
      date: Math.floor(Date.now() / 1000),
      chat: { id: Number(message.chat_id), type },
      from: BOT,
      ...(message.text !== undefined ? { text: message.text } : {}),
      ...(message.reply_markup ? { reply_markup: message.reply_markup } : {}),
      ...(message.document
        ? {
            document: {
              file_id: `sent-${message.message_id}`,
              file_unique_id: `us-${message.message_id}`,
              file_name: message.document.file_name,
            },
          }
        : {}),
    };
  }

  /** getUpdates: updates from `offset` on (earlier ones are confirmed and dropped), waiting up to `timeout` s. */
  private async updates(offset: number, timeout: number, req: IncomingMessage): Promise<Update[]> {
    const pending = () => {
      while (this.queue.length > 0 && (this.queue[0] as Update).update_id < offset) this.queue.shift();
      return [...this.queue];
    };
    if (pending().length === 0 && timeout > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeout * 1000);
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        this.waiters.push(wake);
        req.once("close", wake);
      });
    }
    return pending();
  }

  private reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }
}

async function readParams(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const type = req.headers["content-type"] ?? "";
  if (body.length === 0) return {};
  if (type.includes("application/json")) return JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  if (type.includes("multipart/form-data")) {
    const params: Record<string, unknown> = {};
    for (const part of multipartParts(body, /boundary=([^;]+)/.exec(type)?.[1] ?? "")) {
      if (part.filename === undefined) {
        const value = part.data.toString("utf8");
        try {
          params[part.name] = JSON.parse(value);
        } catch {
          params[part.name] = value;
        }
      } else {
        params[part.name] = { name: part.filename, bytes: part.data };
      }
    }
    // grammY sends a file as `attach://<id>`; resolve it to the part.
    for (const [key, value] of Object.entries(params)) {
      if (typeof value === "string" && value.startsWith("attach://")) params[key] = params[value.slice("attach://".length)];
    }
    return params;
  }
  return Object.fromEntries(new URLSearchParams(body.toString("utf8")));
}

/** The parts of a multipart/form-data body (a plain reader: Telegram takes what grammY sends, so this must too). */
function multipartParts(body: Buffer, boundary: string): Array<{ name: string; filename: string | undefined; data: Buffer }> {
  const parts: Array<{ name: string; filename: string | undefined; data: Buffer }> = [];
  const delimiter = Buffer.from(`--${boundary.replace(/^"|"$/g, "")}`);
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const chunk = body.subarray(start, next);
    const headerEnd = chunk.indexOf("\r\n\r\n");
    if (headerEnd >= 0) {
      const headers = chunk.subarray(0, headerEnd).toString("utf8");
      let data = chunk.subarray(headerEnd + 4);
      if (data.subarray(-2).toString() === "\r\n") data = data.subarray(0, -2);
      const name = /(?:^|[;\s])name="?([^";\r\n]*)"?/.exec(headers)?.[1];
      const filename = /filename="?([^";\r\n]*)"?/.exec(headers)?.[1];
      if (name !== undefined) parts.push({ name, filename, data });
    }
    at = next;
  }
  return parts;
}

/** Updates as Telegram sends them. */
export function textUpdate(
  tg: FakeTelegram,
  options: {
    text: string;
    from?: { id: number; username?: string };
    chat?: { id: number; type: string };
    entities?: unknown[];
    document?: unknown;
    replyToBot?: boolean;
  },
): Update {
  const from = { is_bot: false, first_name: "Ada", ...(options.from ?? { id: 42, username: "ada" }) };
  const chat = options.chat ?? { id: from.id, type: "private" };
  tg.rememberChat(chat.id, chat.type);
  const command = /^\/[A-Za-z_]+(@\w+)?/.exec(options.text);
  const entities = options.entities ?? (command ? [{ type: "bot_command", offset: 0, length: command[0].length }] : undefined);
  return {
    update_id: tg.updateId(),
    message: {
      message_id: Math.floor(Math.random() * 1e6),
      date: Math.floor(Date.now() / 1000),
      chat,
      from,
      ...(options.document ? { document: options.document, caption: options.text } : { text: options.text }),
      ...(entities ? (options.document ? { caption_entities: entities } : { entities }) : {}),
      ...(options.replyToBot ? { reply_to_message: { message_id: 1, date: 0, chat, from: BOT, text: "earlier" } } : {}),
    },
  };
}

export function pressUpdate(tg: FakeTelegram, message: ChatMessage, data: string, from = { id: 42, username: "ada" }): Update {
  const type = tg.chatTypes.get(message.chat_id) ?? "private";
  return {
    update_id: tg.updateId(),
    callback_query: {
      id: `cq-${tg.updateId()}`,
      from: { is_bot: false, first_name: "Ada", ...from },
      chat_instance: "ci",
      data,
      message: { message_id: message.message_id, date: 0, chat: { id: Number(message.chat_id), type }, from: BOT, text: message.text },
    },
  };
}
