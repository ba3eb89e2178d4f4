import {
  formatSSEErrorEvent,
  formatSSEEvent,
  ListTaskPushNotificationConfigsResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { ExtendedAgentCardNotConfiguredError, restStatusFor, toRestErrorBody, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import type { ServerCallContext } from "@a2a-js/sdk/server";
import type { GatewayReply } from "@antler/plugin-runtime/routes";
import type { AntlerA2AHandler } from "./handler.js";

const A2A_JSON = "application/a2a+json";

/** One HTTP+JSON call: the path after the REST base, its method, the parsed body. */
export interface RestCall {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
  context: ServerCallContext;
}

const json = (status: number, body: unknown): GatewayReply =>
  new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: status === 204 ? {} : { "content-type": A2A_JSON },
  });

export function restError(error: unknown): GatewayReply {
  const status = restStatusFor(error);
  return json(status, toRestErrorBody(error, status));
}

const object = (body: unknown): Record<string, unknown> =>
  typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};

/**
 * The A2A HTTP+JSON (REST) binding over the same handler as JSON-RPC: `POST /message:send`, `POST /message:stream`,
 * `GET /tasks/{id}`, `POST /tasks/{id}:cancel`, `GET|POST /tasks/{id}:subscribe`, and the push-notification config
 * resources under `/tasks/{id}/pushNotificationConfigs`. Bodies and frames are the v1.0 proto-JSON the SDK's REST
 * transport speaks; errors are `google.rpc.Status` bodies with the SDK's status mapping.
 */
export async function handleRestCall(handler: AntlerA2AHandler, call: RestCall, keepAliveMs: number): Promise<GatewayReply> {
  const { method, path, context } = call;
  const tenant = call.query.get("tenant") ?? "";
  try {
    if (method === "POST" && path === "/message:send") {
      const result = await handler.sendMessage(SendMessageRequest.fromJSON(object(call.body)), context);
      const payload = "status" in result ? { $case: "task" as const, value: result } : { $case: "message" as const, value: result };
      return json(200, SendMessageResponse.toJSON({ payload }));
    }
    if (method === "POST" && path === "/message:stream") {
      return await sse(handler.sendMessageStream(SendMessageRequest.fromJSON(object(call.body)), context), keepAliveMs);
    }
    if (method === "GET" && path === "/extendedAgentCard") throw new ExtendedAgentCardNotConfiguredError();
    if (method === "GET" && path === "/tasks") throw new UnsupportedOperationError("ListTasks is not supported yet by this server");
    const task = /^\/tasks\/([^/:]+)(:cancel|:subscribe)?(?:\/pushNotificationConfigs(?:\/([^/]+))?)?$/.exec(path);
    if (task?.[1]) {
      const taskId = decodeURIComponent(task[1]);
      const verb = task[2];
      const configs = path.includes("/pushNotificationConfigs");
      const configId = task[3] === undefined ? undefined : decodeURIComponent(task[3]);
      if (!configs && !verb && method === "GET") {
        const history = call.query.get("historyLength");
        return json(
          200,
          Task.toJSON(
            await handler.getTask({ tenant, id: taskId, ...(history !== null ? { historyLength: Number(history) } : {}) }, context),
          ),
        );
      }
      if (!configs && verb === ":cancel" && method === "POST") {
        const metadata = object(call.body).metadata;
        return json(
          200,
          Task.toJSON(
            await handler.cancelTask(
              {
                tenant,
                id: taskId,
                metadata: typeof metadata === "object" && metadata !== null ? (metadata as Record<string, unknown>) : undefined,
              },
              context,
            ),
          ),
        );
      }
      if (!configs && verb === ":subscribe" && (method === "GET" || method === "POST")) {
        return await sse(handler.resubscribe({ tenant, id: taskId }, context), keepAliveMs);
      }
      if (configs && !verb && configId === undefined && method === "POST") {
        const config = TaskPushNotificationConfig.fromJSON({ ...object(call.body), taskId });
        return json(201, TaskPushNotificationConfig.toJSON(await handler.createTaskPushNotificationConfig(config, context)));
      }
      if (configs && !verb && configId === undefined && method === "GET") {
        const list = await handler.listTaskPushNotificationConfigs({ tenant, taskId, pageSize: 0, pageToken: "" }, context);
        return json(200, ListTaskPushNotificationConfigsResponse.toJSON(list));
      }
      if (configs && !verb && configId !== undefined && method === "GET") {
        return json(
          200,
          TaskPushNotificationConfig.toJSON(await handler.getTaskPushNotificationConfig({ tenant, taskId, id: configId }, context)),
        );
      }
      if (configs && !verb && configId !== undefined && method === "DELETE") {
        await handler.deleteTaskPushNotificationConfig({ tenant, taskId, id: configId }, context);
        return json(204, undefined);
      }
    }
    return json(404, {
      error: { code: 404, status: "NOT_FOUND", message: `no A2A HTTP+JSON operation ${method} ${path}`, details: [] },
    });
  } catch (error) {
    return restError(error);
  }
}

const encoder = new TextEncoder();

/** A stream as SSE frames of proto-JSON `StreamResponse`s; a refusal before the first event is a plain error reply. */
async function sse(stream: AsyncGenerator<StreamResponse, void, undefined>, keepAliveMs: number): Promise<GatewayReply> {
  const iterator = stream[Symbol.asyncIterator]();
  let first: IteratorResult<StreamResponse>;
  try {
    first = await iterator.next();
  } catch (error) {
    return restError(error);
  }
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (frame: string) => {
        if (!closed) controller.enqueue(encoder.encode(frame));
      };
      timer = setInterval(() => send(": keep-alive\n\n"), keepAliveMs);
      try {
        if (!first.done) send(formatSSEEvent(StreamResponse.toJSON(first.value)));
        for (;;) {
          if (closed) break;
          const next = await iterator.next();
          if (next.done) break;
          send(formatSSEEvent(StreamResponse.toJSON(next.value)));
        }
      } catch (error) {
        send(formatSSEErrorEvent(toRestErrorBody(error, restStatusFor(error))));
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
      void iterator.return?.(undefined)?.catch(() => undefined);
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
