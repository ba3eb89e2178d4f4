import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { generateTraceId, type Logger, normalizeTraceId, TRACE_ID_HEADER } from "@antler/kernel";
import { GatewayErrorCodes } from "./errors.js";

/**
 * The id an `X-Trace-Id` header asks for. Node joins repeated headers with ", " (and a proxy may do the same),
 * so the value is a list: its first usable element wins; none usable gives `null`, and the caller mints one.
 */
export function firstUsableTraceId(header: string | undefined): string | null {
  if (header === undefined) return null;
  for (const element of header.split(",")) {
    const id = normalizeTraceId(element.trim());
    if (id) return id;
  }
  return null;
}

/**
 * A `clientError` listener for the HTTP server: Node's parser refused the bytes (NUL or bare CR/LF in a header,
 * obs-fold, oversized headers, a timeout) before any route or middleware ran, so this writes the minimal answer
 * itself, with a coded JSON body and a fresh `X-Trace-Id` like every other response, and closes the connection.
 */
export function answerClientError(logger?: Logger): (error: Error & { code?: string }, socket: Duplex) => void {
  return (error, socket) => {
    // Nothing to answer on a dead socket, or when a response is already under way on it.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (error.code === "ECONNRESET" || !socket.writable || inFlight) {
      socket.destroy();
      return;
    }
    const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    const traceId = generateTraceId();
    const body = JSON.stringify({
      error: {
        code: GatewayErrorCodes.MALFORMED_REQUEST,
        message:
          status === 431
            ? "the request headers are too large"
            : status === 408
              ? "the request did not arrive in time"
              : `the request is not valid HTTP (${error.code ?? "parse error"})`,
        hint:
          status === 431
            ? "Send fewer or smaller headers (the limit is Node's --max-http-header-size, 16 KiB by default)."
            : "Send a well-formed HTTP/1.1 request: CRLF line endings, no control characters or folded lines in headers.",
      },
    });
    logger?.warn({ trace_id: traceId, code: error.code, status }, "malformed HTTP request refused");
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        "Connection: close\r\n" +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `${TRACE_ID_HEADER}: ${traceId}\r\n\r\n${body}`,
    );
  };
}

/**
 * The answer for a request the parser accepted but that names no valid URL (a bad absolute-form target or
 * Host header), which the Node adapter refuses before the app runs: the same coded 400, with a fresh trace id.
 */
export function answerUnroutableRequest(logger?: Logger): (error: unknown) => Response {
  return (error) => {
    const traceId = generateTraceId();
    logger?.warn({ trace_id: traceId, err: error }, "request with an invalid URL refused");
    const body = {
      error: {
        code: GatewayErrorCodes.MALFORMED_REQUEST,
        message: "the request target or Host header does not form a valid URL",
        hint: "Send a path such as /api/threads and a valid Host header.",
      },
    };
    return new Response(JSON.stringify(body), {
      status: 400,
      headers: { "content-type": "application/json; charset=utf-8", connection: "close", [TRACE_ID_HEADER]: traceId },
    });
  };
}
