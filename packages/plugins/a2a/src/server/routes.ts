import { AgentCard, formatSSEEvent } from "@a2a-js/sdk";
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from "@a2a-js/sdk/server";
import type { Logger } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import { defineGatewayRoute, type GatewayRequest, type GatewayRoute } from "@antler/plugin-runtime/routes";
import { z } from "zod";
import { buildAgentCard, type CardOptions, restPath } from "./card.js";
import { AntlerA2AHandler, GATEWAY_REQUEST_KEY } from "./handler.js";
import type { PushNotifier } from "./push.js";
import { handleRestCall, restError } from "./rest.js";
import type { A2ATaskStore } from "./task-store.js";

export const AGENT_CARD_ROUTE = "/.well-known/agent-card.json";

export interface A2ARouteOptions extends CardOptions {
  store: A2ATaskStore;
  publicUrl: string | undefined;
  keepAliveMs: number;
  logger?: Logger | undefined;
  push?: PushNotifier | undefined;
}

/**
 * The agent card (public, at the well-known path) and the JSON-RPC endpoint (behind the gateway's API keys; its
 * body limit answers an oversized message with a 413 before the SDK sees it).
 */
export function a2aRoutes(options: A2ARouteOptions): GatewayRoute[] {
  let client: AntlerClient | undefined;
  const card = (origin: string) => {
    if (!client) throw new Error("the agent card is built from a gateway request's client");
    return buildAgentCard(client, origin, options);
  };
  const handler = new AntlerA2AHandler({
    store: options.store,
    card,
    publicUrl: options.publicUrl,
    logger: options.logger,
    push: options.push,
  });
  const transport = new JsonRpcTransportHandler(handler);
  const originOf = (req: GatewayRequest) => options.publicUrl ?? new URL(req.request.url).origin;
  return [
    defineGatewayRoute({
      method: "GET",
      path: AGENT_CARD_ROUTE,
      mount: "root",
      auth: "none",
      summary: "A2A: the agent card (public): skills, the JSON-RPC interface, the API-key security scheme.",
      handler: async (req) => {
        client = req.client;
        const body = AgentCard.toJSON(await buildAgentCard(req.client, originOf(req), options));
        return { status: 200, body, headers: { "cache-control": "no-cache" } };
      },
    }),
    defineGatewayRoute({
      method: "POST",
      path: options.prefix,
      mount: "root",
      summary: "A2A JSON-RPC: SendMessage, SendStreamingMessage (SSE), GetTask, CancelTask, SubscribeToTask.",
      body: z.unknown(),
      handler: async (req) => {
        client = req.client;
        const context = callContext(req);
        const id = rpcId(req.body);
        try {
          // A caller that names no version gets 1.0; one that names another is refused as the spec says.
          if (req.request.headers.get("a2a-version")) {
            validateVersion(context.requestedVersion, await buildAgentCard(req.client, originOf(req), options), "JSONRPC");
          }
        } catch (error) {
          return { status: 200, body: { jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) } };
        }
        const answer = await transport.handle(req.body as Record<string, unknown>, context);
        if (!isAsyncIterable(answer)) return { status: 200, body: answer };
        const iterator = answer[Symbol.asyncIterator]();
        let first: IteratorResult<unknown>;
        try {
          first = await iterator.next();
        } catch (error) {
          // Refused before any event (unknown task, busy thread, bad message): a plain JSON-RPC error.
          return { status: 200, body: { jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) } };
        }
        return new Response(sseBody(first, iterator, id, options.keepAliveMs), {
          status: 200,
          headers: {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache, no-transform",
            connection: "keep-alive",
            "x-accel-buffering": "no",
          },
        });
      },
    }),
    ...(options.rest
      ? (["GET", "POST", "DELETE"] as const).map((method) =>
          defineGatewayRoute({
            method,
            path: `${restPath(options.prefix)}/*`,
            mount: "root",
            summary: "A2A HTTP+JSON: /message:send, /message:stream, /tasks/{id}[:cancel|:subscribe], /tasks/{id}/pushNotificationConfigs.",
            ...(method === "POST" ? { body: z.unknown() } : {}),
            handler: async (req) => {
              client = req.client;
              const context = callContext(req);
              try {
                if (req.request.headers.get("a2a-version")) {
                  validateVersion(context.requestedVersion, await buildAgentCard(req.client, originOf(req), options), "HTTP+JSON");
                }
              } catch (error) {
                return restError(error);
              }
              const url = new URL(req.request.url);
              const path = url.pathname.slice(restPath(options.prefix).length);
              return handleRestCall(handler, { method, path, query: url.searchParams, body: req.body, context }, options.keepAliveMs);
            },
          }),
        )
      : []),
  ];
}

function callContext(req: GatewayRequest): ServerCallContext {
  return new ServerCallContext({
    user: { isAuthenticated: true, userName: req.userId },
    state: new Map<string, unknown>([[GATEWAY_REQUEST_KEY, req]]),
    ...(req.request.headers.get("a2a-version") ? { requestedVersion: req.request.headers.get("a2a-version") as string } : {}),
  });
}

function rpcId(body: unknown): string | number | null {
  const id = typeof body === "object" && body !== null ? (body as { id?: unknown }).id : undefined;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}

const encoder = new TextEncoder();

/** One `data:` frame per JSON-RPC response; an error mid-stream is the last frame; comment lines while quiet. */
function sseBody(
  first: IteratorResult<unknown>,
  iterator: AsyncIterator<unknown>,
  id: string | number | null,
  keepAliveMs: number,
): ReadableStream<Uint8Array> {
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (frame: string) => {
        if (!closed) controller.enqueue(encoder.encode(frame));
      };
      timer = setInterval(() => send(": keep-alive\n\n"), keepAliveMs);
      try {
        if (!first.done) send(formatSSEEvent(first.value));
        for (;;) {
          if (closed) break;
          const next = await iterator.next();
          if (next.done) break;
          send(formatSSEEvent(next.value));
        }
      } catch (error) {
        send(formatSSEEvent({ jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }));
      } finally {
        clearInterval(timer);
      }
      if (closed) return;
      closed = true;
      controller.close();
    },
    cancel() {
      closed = true;
      clearInterval(timer);
      // Ends the SDK's stream, whose end lets the handler pull the run on without a reader.
      void iterator.return?.(undefined)?.catch(() => undefined);
    },
  });
}
