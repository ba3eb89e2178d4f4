import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { ErrorCodes, isAntlerError, KERNEL_VERSION, type Logger, requestTraceContext, TRACE_ID_HEADER, threadPaths } from "@antler/kernel";
import { type AntlerClient, agentSaveRequestSchema, RuntimeErrorCodes, runRequestText, runtimeConfig } from "@antler/plugin-runtime";
import type { GatewayReply, GatewayRequestWrapper, GatewayRoute } from "@antler/plugin-runtime/routes";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { z } from "zod";
import { authMiddleware, mountSessionRoutes, SessionStore } from "./auth.js";
import type { GatewayConfig } from "./config.js";
import { assertJsonContentType, hostCheck, sameOriginCheck } from "./cross-site.js";
import type { GatewayEnv } from "./env.js";
import { describeHandledError, GatewayErrorCodes, HttpError } from "./errors.js";
import { followedEvents } from "./follow-run.js";
import type { McpAdmin } from "./mcp-optional.js";
import { methodGuard } from "./method-guard.js";
import { multipartBoundary, receiveMultipart, removeStaged } from "./multipart.js";
import { cancelOnHangUp, enqueueAndWait } from "./queued-runs.js";
import { declaredLength, payloadTooLarge, readBoundedBody, requestBodyChunks } from "./request-body.js";
import {
  CALLER_DATA_LIMITS,
  findCallerDataViolation,
  findDepthViolation,
  gatewayRunRequestSchema,
  gatewayThreadCreateSchema,
  MAX_JSON_DEPTH,
} from "./request-limits.js";
import type { RunEventLog } from "./run-events/log.js";
import { mountRunStreamRoutes } from "./run-stream.js";
import { mountThreadActionRoutes } from "./thread-actions.js";
import { firstUsableTraceId } from "./trace-edge.js";

export type { GatewayEnv } from "./env.js";

export interface GatewayAppOptions {
  client: AntlerClient;
  config: GatewayConfig;
  /** Routes contributed by plugins (the serve command collects them through `gatewayRoutesToken`). */
  routes?: ReadonlyArray<{ plugin: string; route: GatewayRoute }>;
  /** Request wrappers contributed by plugins (`aroundRequest`), outermost first. */
  requestWrappers?: ReadonlyArray<{ plugin: string; around: GatewayRequestWrapper }>;
  /**
   * The run event log behind `GET .../runs/{run}/stream` (`startGateway` opens it from `stream_bridge` and
   * attaches it to the client). Without it runs cannot be joined; stream ids are sent all the same.
   */
  runEvents?: RunEventLog | null;
  logger?: Logger;
  /**
   * Receives every unhandled error after the trace middleware has answered it with a coded 500 (the
   * re-raise). Default: nothing beyond the error log line.
   */
  onUnhandledError?: (error: unknown, traceId: string) => void;
  /** The browser sessions `POST /api/session` issues (default: a fresh store in this app's memory). */
  sessions?: SessionStore;
  /**
   * The MCP admin routes (`/api/mcp/*`, `/api/threads/{id}/background-tasks`), mounted when given. `startGateway`
   * loads them only when `@antler/plugin-mcp` is among the kernel's plugins (it is an optional peer); without them
   * those paths are 404s.
   */
  mcp?: McpAdmin | undefined;
}

const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});

/** Messages `GET /state` answers when the request does not say: the thread's last page. */
export const STATE_MESSAGES_PAGE = 50;
const MAX_STATE_MESSAGES_PAGE = 1000;

// `?messages_limit=N|all&before=P`: the N messages just before position P (default the end); `all` reads them all.
const stateQuerySchema = z.object({
  messages_limit: z
    .union([z.literal("all"), z.coerce.number().int().min(1).max(MAX_STATE_MESSAGES_PAGE)])
    .optional()
    .describe(`1–${MAX_STATE_MESSAGES_PAGE}, or "all"; default ${STATE_MESSAGES_PAGE}`),
  before: z.coerce.number().int().min(0).optional().describe("the page ends just before this 0-based position; default the end"),
});

// What an `auth: "none"` route's handler sees: no user, and an id every store refuses.
const UNAUTHENTICATED = Object.freeze({ kind: "user" as const, userId: "" });

// Errors the trace middleware already answered; onError hands back its response instead of making another.
const answered = new WeakSet<object>();

/** Builds the Hono app: trace middleware first, then CORS, auth on /api, the built-in routes and contributed ones. */
/** `POST .../runs/{run}/resume`: the decision (its shape is the pause owner's), plus what to do if the caller leaves. */
const resumeRequestSchema = z.looseObject({ on_disconnect: z.enum(["cancel", "continue"]).optional() });

export function createGatewayApp(options: GatewayAppOptions): Hono<GatewayEnv> {
  const { client, config } = options;
  const logger = options.logger ?? client.kernel.logger.child({ plugin: "@antler/plugin-gateway" });
  const app = new Hono<GatewayEnv>();

  app.use("*", traceMiddleware(logger));
  for (const { around } of options.requestWrappers ?? []) app.use("*", (c, next) => around(c.req.raw, next));
  // Before CORS and every route: a rebound DNS name or another site's page gets no answer it could use.
  for (const check of [hostCheck(config), sameOriginCheck(config)]) if (check) app.use("*", check);
  if (config.cors.allow_origins.length > 0) {
    const origins = config.cors.allow_origins;
    app.use(
      "*",
      cors({
        origin: origins.includes("*") ? "*" : origins,
        allowHeaders: ["Authorization", "X-API-Key", "Content-Type", "Last-Event-ID", TRACE_ID_HEADER, "X-Antler-CSRF"],
        allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        // Not CORS-safelisted, so browsers hide them from scripts unless they are exposed. `Content-Location` and
        // `Location` name a started run (LangGraph's SDK rejoins and cancels by them), `X-Pagination-Next` pages a
        // search, and the AI SDK's stream header marks a UI message stream.
        exposeHeaders: [TRACE_ID_HEADER, "X-Run-Id", "Content-Location", "Location", "X-Pagination-Next", "X-Vercel-AI-UI-Message-Stream"],
        maxAge: 600,
      }),
    );
  }

  app.onError((error, c) => {
    const handled = describeHandledError(error);
    if (handled) {
      // A refusal at capacity is the instance protecting its live runs, not a failure of this request's handling.
      if (handled.body.error.code === RuntimeErrorCodes.RUNS_AT_CAPACITY) {
        logger.warn({ trace_id: c.get("traceId"), details: handled.body.error.details }, "run refused: instance at capacity");
      } else if (handled.status >= 500) {
        logger.error({ err: error, trace_id: c.get("traceId") }, "request failed");
      }
      return c.json(handled.body, handled.status as 400, handled.headers);
    }
    if (answered.has(error)) {
      options.onUnhandledError?.(error, c.get("traceId"));
      return c.res;
    }
    // Not ours to answer: let it reach the trace middleware, which sends the coded 500.
    throw error;
  });
  app.notFound((c) =>
    c.json(
      {
        error: {
          code: GatewayErrorCodes.NOT_FOUND,
          message: `no route for ${c.req.method} ${new URL(c.req.url).pathname}`,
          hint: "See the gateway README for the routes.",
        },
      },
      404,
    ),
  );

  // After CORS (a preflight is its business), before auth: a wrong method is a 405 whoever asks.
  app.use(
    "*",
    methodGuard(() => app.routes),
  );
  app.get("/health", (c) => c.json({ status: "ok" as const, version: KERNEL_VERSION }));
  const sessions = options.sessions ?? new SessionStore();
  const authenticate = authMiddleware(config, sessions);
  app.use("/api/*", authenticate);
  mountSessionRoutes(app, config, sessions);

  const user = (c: Context<GatewayEnv>) => c.get("principal").userId;
  const readJson = async <S extends z.ZodType>(c: Context<GatewayEnv>, schema: S): Promise<z.output<S>> =>
    parseBody(schema, await readJsonBody(c, config.max_json_bytes, config.auth.mode === "none"));

  // The models the key's role may run on (authorization), decided by the same admission checks as a run.
  app.get("/api/models", async (c) => {
    const principal = c.get("principal");
    return c.json({ models: await client.listModels({ userId: principal.userId, principal, traceId: c.get("traceId") }) });
  });
  app.get("/api/models/:name", async (c) => {
    const principal = c.get("principal");
    const options = { userId: principal.userId, principal, traceId: c.get("traceId") };
    const model = await client.getModel(c.req.param("name"), options).catch((err: unknown) => {
      // A lookup by name answers 404 for an unknown model (a run naming one is a bad request, 400).
      if (isAntlerError(err, ErrorCodes.MODEL_NOT_FOUND)) throw new HttpError(404, err.code, err.message.split("\n")[0] ?? "", err.hint);
      throw err;
    });
    return c.json(model);
  });

  // ------------------------------------------------------------------ threads
  app.post("/api/threads", async (c) => {
    const body = await readJson(c, gatewayThreadCreateSchema);
    const existed = body.thread_id ? await client.getThreadRecord(body.thread_id, { userId: user(c) }).catch(() => null) : null;
    const record = await client.createThread({
      threadId: body.thread_id,
      metadata: body.metadata,
      ifExists: body.if_exists,
      userId: user(c),
    });
    return c.json(record, existed ? 200 : 201);
  });
  app.get("/api/threads", async (c) => {
    const query = parseBody(listQuerySchema, c.req.query());
    return c.json({ threads: await client.listThreads({ ...query, userId: user(c) }) });
  });
  app.get("/api/threads/:id", async (c) => c.json(await client.getThreadRecord(c.req.param("id"), { userId: user(c) })));
  app.delete("/api/threads/:id", async (c) => c.json(await client.deleteThread(c.req.param("id"), { userId: user(c) })));
  // A bounded read by default: the last page of messages, with the thread's count and the page's position.
  app.get("/api/threads/:id/state", async (c) => {
    const query = parseBody(stateQuerySchema, c.req.query());
    const limit = query.messages_limit ?? STATE_MESSAGES_PAGE;
    const messages = { ...(limit === "all" ? {} : { limit }), ...(query.before === undefined ? {} : { before: query.before }) };
    return c.json(await client.getThread(c.req.param("id"), { userId: user(c), messages }));
  });

  mountThreadActionRoutes(app, { client, user, readJson });

  // ------------------------------------------------------------------ custom agents
  app.get("/api/agents", async (c) => c.json(await client.listAgents({ userId: user(c) })));
  app.get("/api/agents/:name", async (c) => c.json(await client.getAgent(c.req.param("name"), { userId: user(c) })));
  app.put("/api/agents/:name", async (c) => {
    const body = await readJson(c, agentSaveRequestSchema);
    return c.json(await client.saveAgent(c.req.param("name"), body, { userId: user(c) }));
  });
  app.delete("/api/agents/:name", async (c) => c.json(await client.deleteAgent(c.req.param("name"), { userId: user(c) })));

  // ------------------------------------------------------------------ runs
  const prepareRun = async (c: Context<GatewayEnv>) => {
    const threadId = c.req.param("id") as string;
    const body = await readJson(c, gatewayRunRequestSchema);
    await client.getThreadRecord(threadId, { userId: user(c) });
    // Unknown model: a 400 before anything starts, not an error frame in the middle of a stream. No model in the
    // body leaves the choice to the runtime, which takes the custom agent's `model:` before the default.
    const model = body.model === undefined ? undefined : client.kernel.modelConfig(body.model).name;
    const context = { ...(body.config?.configurable ?? {}), ...(body.config?.context ?? {}), ...(body.context ?? {}) };
    const metadata = { ...(body.config?.metadata ?? {}), ...(body.metadata ?? {}) };
    // Each object was bounded on its own; what reaches the run is the merge, so it must hold the same limits.
    assertCallerDataWithinLimits("context (config.configurable, config.context and context together)", context);
    assertCallerDataWithinLimits("metadata (config.metadata and metadata together)", metadata);
    return {
      message: runRequestText(body),
      onDisconnect: body.on_disconnect ?? "cancel",
      options: {
        threadId,
        userId: user(c),
        // The API key's role, never one from the body (the runtime drops a caller's `user_role`).
        ...(c.get("principal").role !== undefined ? { userRole: c.get("principal").role } : {}),
        model,
        context,
        metadata,
        traceId: c.get("traceId"),
        runId: randomUUID(),
        multitaskStrategy: body.multitask_strategy,
        agent: body.agent_name,
        bootstrap: body.is_bootstrap,
        thinking: body.thinking_enabled,
        ...(body.reasoning_effort !== undefined ? { reasoningEffort: body.reasoning_effort } : {}),
      },
    };
  };

  mountRunStreamRoutes(app, { client, config, logger, prepareRun, runEvents: options.runEvents ?? null, user });

  app.post("/api/threads/:id/runs/wait", async (c) => {
    const { message, onDisconnect, options: runOptions } = await prepareRun(c);
    const signal = onDisconnect === "continue" ? undefined : c.req.raw.signal;
    if (!config.runs.execute) {
      // Queued for an executor (`antler worker`); the answer is read from the run's logged events.
      const { threadId, runId } = runOptions;
      const userId = user(c);
      const answered = signal ? cancelOnHangUp(client, signal, { userId, threadId, runId }) : () => {};
      const deps = { client, runEvents: options.runEvents ?? null };
      const result = await enqueueAndWait(deps, message, { ...runOptions, userId }, c.req.raw.signal).finally(answered);
      return c.json(result, 200, { "x-run-id": result.run_id });
    }
    const result = await client.invoke(message, { ...runOptions, signal });
    return c.json(result, 200, { "x-run-id": result.run_id });
  });
  // A paused run's decision (an approval): the body is the decision, checked by the pause's owner (the plugin that
  // paused it) before anything runs; the answer is the run's result as /runs/wait gives it, paused again or not.
  app.post("/api/threads/:id/runs/:run/resume", async (c) => {
    const { on_disconnect: onDisconnect, ...decision } = await readJson(c, resumeRequestSchema);
    const signal = onDisconnect === "continue" ? undefined : c.req.raw.signal;
    const result = await client.resume(c.req.param("id"), c.req.param("run"), decision, { userId: user(c), signal });
    return c.json(result, 200, { "x-run-id": result.run_id });
  });
  app.get("/api/threads/:id/runs", async (c) => {
    const query = parseBody(listQuerySchema, c.req.query());
    return c.json({ runs: await client.listRuns(c.req.param("id"), { ...query, userId: user(c) }) });
  });
  app.get("/api/threads/:id/runs/:run", async (c) =>
    c.json(await client.getRun(c.req.param("id"), c.req.param("run"), { userId: user(c) })),
  );
  app.post("/api/threads/:id/runs/:run/cancel", async (c) => {
    const result = await client.cancelRun(c.req.param("id"), c.req.param("run"), { userId: user(c) });
    // Still running: another instance holds the run and has not stopped it within the wait. The request is
    // recorded and its owner honours it at its next heartbeat, so this is accepted, not done.
    return c.json(result, result.status === "running" ? 202 : 200);
  });

  // ------------------------------------------------------------------ files
  const { max_files: maxFiles, max_file_bytes: maxFileBytes } = runtimeConfig(client.kernel.config).uploads;
  app.post("/api/threads/:id/uploads", async (c) => {
    const threadId = c.req.param("id");
    await client.getThreadRecord(threadId, { userId: user(c) });
    const requestLimit = maxFileBytes * maxFiles + 64 * 1024;
    const declared = declaredLength(c);
    if (declared !== null && declared > requestLimit) {
      throw payloadTooLarge(
        `the upload request is ${declared} bytes, over the limit of ${requestLimit}`,
        "Send fewer or smaller files, or raise uploads.max_file_bytes / uploads.max_files in config.yaml.",
        { max_bytes: requestLimit, size: declared, limit: "uploads.max_file_bytes × uploads.max_files" },
      );
    }
    const boundary = multipartBoundary(c.req.header("content-type") ?? "");
    if (boundary === null) {
      throw new HttpError(
        400,
        GatewayErrorCodes.INVALID_REQUEST,
        "uploads must be multipart/form-data",
        "Send the files in a form field named `files`.",
      );
    }
    // Parts stream to hidden temp files in the thread's uploads folder (listings skip dot files), so a big
    // upload never sits in memory and a refused one leaves nothing behind.
    const uploadsDir = threadPaths(client.kernel.paths.baseDir, user(c), threadId).uploads;
    const form = await receiveMultipart(requestBodyChunks(c), {
      boundary,
      dir: uploadsDir,
      fileFields: new Set(["files", "file"]),
      limits: { maxFileBytes, maxFiles, maxRequestBytes: requestLimit },
    });
    try {
      if (form.fileCount === 0) {
        throw new HttpError(
          400,
          GatewayErrorCodes.INVALID_REQUEST,
          "no files in the upload",
          "Send one or more files in the form field `files`.",
        );
      }
      if (form.fileCount > maxFiles) {
        throw new HttpError(
          400,
          GatewayErrorCodes.INVALID_REQUEST,
          `${form.fileCount} files in one upload, over the limit of ${maxFiles}`,
          "Send fewer files.",
          { files: form.fileCount, max_files: maxFiles },
        );
      }
      const saved = [];
      for (const file of form.files) {
        const name = file.filename || "upload";
        try {
          saved.push(await client.uploadFile(threadId, file.path, { userId: user(c), filename: name }));
        } catch (error) {
          // The kernel names the staged temp file; the caller knows the file by its own name.
          if (isAntlerError(error, RuntimeErrorCodes.UPLOAD_INVALID)) {
            const message = (error.message.split("\n")[0] ?? "").replaceAll(`${file.path}: `, "").replaceAll(file.path, name);
            const details: Record<string, unknown> = { ...error.details, source: name };
            if (details.max_bytes !== undefined) {
              throw payloadTooLarge(message, "Upload a smaller file, or raise uploads.max_file_bytes in config.yaml.", details);
            }
            throw new HttpError(400, error.code, message, error.hint, details);
          }
          throw error;
        }
      }
      return c.json({ files: saved }, 201);
    } finally {
      await removeStaged(form.files);
    }
  });

  app.get("/api/threads/:id/artifacts/*", async (c) => {
    const threadId = c.req.param("id");
    const pathname = new URL(c.req.url).pathname;
    const prefix = `/api/threads/${threadId}/artifacts/`;
    const encodedPrefix = `/api/threads/${encodeURIComponent(threadId)}/artifacts/`;
    const rest = pathname.startsWith(encodedPrefix) ? pathname.slice(encodedPrefix.length) : pathname.slice(prefix.length);
    let virtualPath: string;
    try {
      virtualPath = `/${decodeURIComponent(rest)}`;
    } catch {
      throw new HttpError(400, GatewayErrorCodes.INVALID_REQUEST, "the artifact path is not valid percent-encoding");
    }
    const artifact = await client.getArtifact(threadId, virtualPath, { userId: user(c) });
    const active = /^(text\/html|image\/svg\+xml)/.test(artifact.mimeType);
    const name = virtualPath.split("/").pop() ?? "artifact";
    return new Response(new Uint8Array(artifact.bytes), {
      status: 200,
      headers: {
        "content-type": artifact.mimeType.startsWith("text/") ? `${artifact.mimeType}; charset=utf-8` : artifact.mimeType,
        "content-length": String(artifact.size),
        "x-content-type-options": "nosniff",
        // Whatever the agent wrote: active content never runs in the API's origin.
        "content-security-policy": "sandbox; default-src 'none'",
        ...(active || c.req.query("download") !== undefined
          ? { "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(name)}` }
          : {}),
      },
    });
  });

  options.mcp?.mountMcpRoutes(app, { client, config, logger, readJson });

  // ------------------------------------------------------------------ route index
  const index: Array<{ method: string; path: string; plugin: string; summary?: string }> = [];
  app.get("/api", (c) => c.json({ routes: index }));

  // ------------------------------------------------------------------ contributed routes
  const builtin = new Set(app.routes.map((r) => `${r.method} ${r.path}`));
  for (const r of app.routes) {
    if (r.method !== "ALL" && r.path.startsWith("/") && r.path !== "/*" && r.path !== "/api/*") {
      index.push({ method: r.method, path: r.path, plugin: "@antler/plugin-gateway" });
    }
  }
  for (const { plugin, route } of options.routes ?? []) {
    const root = route.mount === "root";
    if (!route.path.startsWith("/")) {
      throw new Error(
        `${plugin} contributes a route with path "${route.path}"; paths are relative to ${root ? "the server root" : "/api"} and must start with "/"`,
      );
    }
    if (root && (route.path === "/api" || route.path.startsWith("/api/"))) {
      throw new Error(`${plugin} contributes the root route ${route.path}; under /api, drop mount: "root" and give the path after /api`);
    }
    if (route.auth === "none" && !root) {
      throw new Error(
        `${plugin} contributes ${route.method} /api${route.path} with auth: "none"; only root routes may skip the gateway's auth`,
      );
    }
    const full = root ? route.path : `/api${route.path}`;
    if (builtin.has(`${route.method} ${full}`) || (root && full === "/health")) {
      throw new Error(`${plugin} contributes ${route.method} ${full}, which the gateway already serves; pick another path`);
    }
    builtin.add(`${route.method} ${full}`);
    index.push({ method: route.method, path: full, plugin, ...(route.summary ? { summary: route.summary } : {}) });
    // `/api/*` is already behind auth; a root route gets it for its own method and path only.
    if (root && route.auth !== "none") app.on(route.method, full, authenticate);
    app.on(route.method, full, async (c) => {
      const principal = route.auth === "none" ? UNAUTHENTICATED : c.get("principal");
      const body = route.body ? await readJson(c, route.body) : undefined;
      const query = route.query ? parseBody(route.query, c.req.query()) : c.req.query();
      const reply = await route.handler({
        principal,
        userId: principal.userId,
        traceId: c.get("traceId"),
        params: c.req.param() as Record<string, string>,
        query,
        body,
        signal: c.req.raw.signal,
        client,
        request: c.req.raw,
        followRun: (threadId, runId, follow = {}) =>
          followedEvents({ client, runEvents: options.runEvents ?? null }, principal.userId, threadId, runId, {
            afterSeq: follow.afterSeq ?? 0,
            signal: follow.signal ?? c.req.raw.signal,
          }),
      });
      return toResponse(c, reply);
    });
  }
  return app;
}

function toResponse(c: Context<GatewayEnv>, reply: GatewayReply): Response {
  if (reply instanceof Response) return reply;
  const status = reply.status ?? 200;
  if (reply.body === undefined) return c.body(null, status as 204, reply.headers);
  return c.json(reply.body as object, status as 200, reply.headers);
}

/**
 * Binds the request's trace scope (the first valid `X-Trace-Id` value is kept, anything else replaced; never
 * inherited),
 * stamps the header on every response, and answers an unhandled error with its own coded 500
 * (`ANTLER_ERR_INTERNAL`, no details) carrying the header, then re-raises it. A failure inside a streaming body happens after this returns: it is the stream's
 * to report, and passes through unchanged.
 */
function traceMiddleware(logger: Logger): MiddlewareHandler<GatewayEnv> {
  return (c, next) =>
    requestTraceContext(firstUsableTraceId(c.req.header(TRACE_ID_HEADER)), async (traceId) => {
      c.set("traceId", traceId);
      const started = performance.now();
      let unhandled: unknown;
      try {
        await next();
      } catch (error) {
        unhandled = error;
        logger.error({ err: error, trace_id: traceId, method: c.req.method, path: new URL(c.req.url).pathname }, "unhandled error");
        // Coded like every other error, and opaque: the details stay in the log line above, found by the trace id.
        c.res = Response.json(
          {
            error: {
              code: "ANTLER_ERR_INTERNAL",
              message: "the server failed to answer this request",
              hint: `The server log has the cause under trace id ${traceId}; retry, and report it if it persists.`,
            },
          },
          { status: 500 },
        );
      }
      try {
        c.res.headers.set(TRACE_ID_HEADER, traceId);
      } catch {
        // Some responses have immutable headers; copy them onto a fresh response.
        c.res = new Response(c.res.body, c.res);
        c.res.headers.set(TRACE_ID_HEADER, traceId);
      }
      if (logger.isLevelEnabled("debug")) {
        const ms = Number((performance.now() - started).toFixed(1));
        logger.debug({ trace_id: traceId, method: c.req.method, path: new URL(c.req.url).pathname, status: c.res.status, ms }, "request");
      }
      if (unhandled !== undefined) {
        if (typeof unhandled === "object" && unhandled !== null) answered.add(unhandled);
        throw unhandled;
      }
    });
}

async function readJsonBody(c: Context<GatewayEnv>, maxBytes: number, requireJsonType: boolean): Promise<unknown> {
  if (requireJsonType) assertJsonContentType(c);
  const bytes = await readBoundedBody(c, {
    maxBytes,
    what: "JSON body",
    hint: "Send a smaller body, or raise max_json_bytes in the gateway config.",
    setting: "max_json_bytes",
  });
  const text = bytes.toString("utf8");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (cause) {
    throw new HttpError(
      400,
      GatewayErrorCodes.BAD_JSON,
      `the request body is not valid JSON: ${(cause as Error).message}`,
      "Send a JSON object with Content-Type: application/json.",
    );
  }
  const deep = findDepthViolation(value, MAX_JSON_DEPTH);
  if (deep) {
    throw new HttpError(400, GatewayErrorCodes.LIMIT_EXCEEDED, `${deep.message} (at ${deep.path || "(body)"})`, "Send a flatter body.", {
      limit: deep.limit,
      max: deep.max,
      path: deep.path,
    });
  }
  return value;
}

function assertCallerDataWithinLimits(field: string, value: Record<string, unknown>): void {
  const violation = findCallerDataViolation(field, value);
  if (!violation) return;
  throw new HttpError(400, GatewayErrorCodes.LIMIT_EXCEEDED, violation.message, callerDataHint(), {
    limit: violation.limit,
    max: violation.max,
  });
}

function callerDataHint(): string {
  const l = CALLER_DATA_LIMITS;
  return `Send less caller data: metadata and context each hold at most ${l.max_keys} top-level keys, ${l.max_entries} entries, ${l.max_depth} levels, ${l.max_string_length}-character strings and ${l.max_bytes} bytes.`;
}

function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join(".") || "(body)", message: issue.message }));
  const first = issues[0];
  // A size or shape limit (see request-limits.ts) gets its own code, and the limit's name and value.
  const limited = parsed.error.issues.find((issue) => issue.code === "custom" && typeof issue.params?.limit === "string");
  if (limited?.code === "custom") {
    throw new HttpError(400, GatewayErrorCodes.LIMIT_EXCEEDED, limited.message, callerDataHint(), {
      limit: limited.params?.limit,
      max: limited.params?.max,
      issues,
    });
  }
  throw new HttpError(
    400,
    GatewayErrorCodes.INVALID_REQUEST,
    first ? `${first.path}: ${first.message}` : "the request is invalid",
    "Fix the named field; the gateway README lists each route's body.",
    { issues },
  );
}

export { parseBody };
