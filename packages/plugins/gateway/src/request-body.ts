import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import type { GatewayEnv } from "./env.js";
import { GatewayErrorCodes, HttpError } from "./errors.js";

/** The request's `Content-Length`, or `null` when it has none (chunked) or it is not a number. */
export function declaredLength(c: Context<GatewayEnv>): number | null {
  const header = c.req.header("content-length");
  if (header === undefined || !/^\d+$/.test(header.trim())) return null;
  return Number(header.trim());
}

/** A 413 with the gateway's code; `details.max_bytes` names the limit that was passed. */
export function payloadTooLarge(message: string, hint: string, details: Record<string, unknown>): HttpError {
  return new HttpError(413, GatewayErrorCodes.PAYLOAD_TOO_LARGE, message, hint, details);
}

/**
 * The request body as it arrives, chunk by chunk. Under the Node server it reads the socket's request stream
 * directly (so nothing sits in a Web-stream queue), and stopping early leaves the connection intact for the
 * answer: the rest of the body is never read here. The server drains and closes it after the response.
 */
export function requestBodyChunks(c: Context<GatewayEnv>): AsyncGenerator<Uint8Array> {
  const incoming = c.env?.incoming;
  if (incoming && typeof incoming.read === "function" && !incoming.readableDidRead) return readIncoming(incoming);
  return readWebBody(c.req.raw.body);
}

async function* readIncoming(incoming: IncomingMessage): AsyncGenerator<Uint8Array> {
  for (;;) {
    for (let chunk = incoming.read() as Buffer | null; chunk !== null; chunk = incoming.read() as Buffer | null) yield chunk;
    if (incoming.readableEnded) return;
    if (incoming.errored || incoming.destroyed) throw bodyCutOff();
    await new Promise<void>((resolve, reject) => {
      const done = (error?: unknown) => {
        incoming.off("readable", onReadable);
        incoming.off("end", onEnd);
        incoming.off("error", onError);
        incoming.off("close", onClose);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onReadable = () => done();
      const onEnd = () => done();
      const onError = () => done(bodyCutOff());
      // `close` before `end`: the peer went away in the middle of the body.
      const onClose = () => (incoming.readableEnded ? done() : done(bodyCutOff()));
      incoming.on("readable", onReadable);
      incoming.on("end", onEnd);
      incoming.on("error", onError);
      incoming.on("close", onClose);
    });
  }
}

async function* readWebBody(body: ReadableStream<Uint8Array> | null): AsyncGenerator<Uint8Array> {
  if (!body) return;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

function bodyCutOff(): HttpError {
  return new HttpError(400, GatewayErrorCodes.INVALID_REQUEST, "the request body ended before it was complete", "Send the whole body.");
}

/**
 * Reads a whole body of at most `maxBytes`: a larger `Content-Length` is refused from the header, and a body
 * without one is refused as soon as it passes the limit, without reading the rest.
 */
export async function readBoundedBody(
  c: Context<GatewayEnv>,
  limit: { maxBytes: number; what: string; hint: string; setting: string },
): Promise<Buffer> {
  const declared = declaredLength(c);
  const tooLarge = (size?: number) =>
    payloadTooLarge(
      size === undefined
        ? `the ${limit.what} is over the limit of ${limit.maxBytes} bytes`
        : `the ${limit.what} is ${size} bytes, over the limit of ${limit.maxBytes}`,
      limit.hint,
      { max_bytes: limit.maxBytes, limit: limit.setting, ...(size === undefined ? {} : { size }) },
    );
  if (declared !== null && declared > limit.maxBytes) throw tooLarge(declared);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of requestBodyChunks(c)) {
    total += chunk.byteLength;
    if (total > limit.maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}
