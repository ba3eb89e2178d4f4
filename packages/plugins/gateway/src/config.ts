import { z } from "zod";

const userIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, "a user id is 1–128 letters, digits, '.', '_', '@' or '-', starting with a letter or digit")
  .refine((id) => id !== "internal", "`internal` is reserved for in-process callers such as the scheduler");

export const apiKeySchema = z.strictObject({
  /** The secret a client sends; write it as `$ENV_VAR` so it never sits in the file. */
  key: z.string().min(16, "API keys must be at least 16 characters (generate one with `openssl rand -hex 24`)"),
  /** The user id the key acts as: threads, uploads, artifacts and runs are scoped by it. */
  user: userIdSchema,
  /**
   * The role the key acts with for authorization (`authorization.roles`, with `@antler/plugin-guardrails`);
   * omitted: `authorization.default_role`. Stamped on every run's context as `user_role`.
   */
  role: z.string().min(1).max(64).optional(),
});

export const gatewayAuthSchema = z
  .strictObject({
    /**
     * `api_keys`: every /api request needs a configured key. `none`: one unauthenticated user, loopback only,
     * with the Host and same-origin checks that keep web pages from driving it (see the README).
     */
    mode: z.enum(["api_keys", "none"]).default("api_keys"),
    /**
     * `mode: none` only: allow binding a non-loopback address. Anyone who can reach the port then acts as
     * `auth.user`; only for a network you trust (a container's private network, a VPN).
     */
    allow_none_on_network: z.boolean().default(false),
    api_keys: z.array(apiKeySchema).default([]),
    /** The single user of `mode: none`. */
    user: userIdSchema.default("default"),
    /** The role of the single user of `mode: none` (see `api_keys[].role`). */
    role: z.string().min(1).max(64).optional(),
    /** Users who may change the MCP config and reset its cache (in `mode: none`, the single user). */
    admins: z.array(userIdSchema).default([]),
    /**
     * Browser sessions (`POST /api/session` with a key sets an HttpOnly, SameSite=Strict cookie): how long one
     * lasts, in seconds (default 12 hours; at most 30 days). Sign-out (`DELETE /api/session`) ends it sooner.
     */
    session_ttl_seconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 24 * 3600)
      .default(12 * 3600),
    /** The session cookie's `Secure` flag: `auto` sets it when the request came over TLS (or X-Forwarded-Proto: https). */
    session_cookie_secure: z.enum(["auto", "always", "never"]).default("auto"),
  })
  .superRefine((auth, issues) => {
    if (auth.mode === "api_keys" && auth.api_keys.length === 0) {
      issues.addIssue({
        code: "custom",
        path: ["api_keys"],
        message:
          "auth.mode is api_keys but no keys are configured; add `api_keys: [{ key: $MY_KEY, user: alice }]`, or use `mode: none` for local use",
      });
    }
    const seen = new Set<string>();
    for (const [i, entry] of auth.api_keys.entries()) {
      if (seen.has(entry.key)) issues.addIssue({ code: "custom", path: ["api_keys", i, "key"], message: "this key is listed twice" });
      seen.add(entry.key);
    }
  });

const redisBridgeSchema = z.strictObject({
  type: z.literal("redis"),
  /** `redis://[user:password@]host:port[/db]`; write it as `$REDIS_URL` so a password never sits in the file. */
  redis_url: z
    .string({ error: "stream_bridge type redis needs redis_url, e.g. `redis_url: $REDIS_URL` (redis://127.0.0.1:6379)" })
    .regex(/^rediss?:\/\//, "redis_url must start with redis:// or rediss://"),
  /** Prefix of the stream keys (`<prefix>run-events:<run_id>`), for a Redis shared with other applications. */
  key_prefix: z.string().default("antler:"),
});

/**
 * Where the run event log lives: `sql` (default) in Antler's database (storage.backend), `redis` in Redis
 * Streams, `none` keeps no log (stream ids are still sent, but a run cannot be joined or resumed).
 * A bare string is short for `{ type: ... }`.
 */
export const streamBridgeSchema = z.union(
  [
    z.enum(["sql", "none"]).transform((type) => ({ type })),
    z.discriminatedUnion("type", [
      z.strictObject({ type: z.literal("sql") }),
      redisBridgeSchema,
      z.strictObject({ type: z.literal("none") }),
    ]),
  ],
  { error: "stream_bridge is sql (default), none, or { type: redis, redis_url: $REDIS_URL }" },
);

/** Bounds on the run event log; `antler serve` sweeps it every `sweep_interval_seconds`. */
export const runEventsConfigSchema = z.strictObject({
  /** Events older than this are deleted (Redis: the run's stream expires this long after its last event). */
  retention_hours: z.number().positive().default(24),
  /** Only a run's newest events beyond this are kept; joining from before them is a 410. */
  max_events_per_run: z.number().int().min(16).default(10_000),
  sweep_interval_seconds: z.number().positive().default(600),
  /** How long events wait to be written in one batch; the live stream never waits for the write. */
  flush_interval_ms: z.number().int().min(1).max(1000).default(20),
  /** How often a joiner on an instance that does not run the run looks for new events in the SQL log. */
  poll_interval_ms: z.number().int().min(10).max(5000).default(100),
});

/** A host name as the Host header names it, without scheme or port; `*.` in front matches any subdomain. */
const allowedHostSchema = z
  .string()
  .regex(
    /^(?:(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/i,
    "allowed_hosts lists host names without scheme or port, e.g. `antler.example.com`, `*.example.com`, `192.168.1.20` or `[fd00::1]`",
  );

export const gatewayConfigSchema = z
  .strictObject({
    /** Interface to bind; `antler serve --host` overrides. Default loopback only. */
    host: z.string().min(1).default("127.0.0.1"),
    /**
     * Host names (the `Host` header, any port) the gateway answers besides the loopback ones (localhost,
     * *.localhost, 127.0.0.1, [::1]), which are always accepted. Checked in `auth.mode: none` always (a foreign
     * Host is DNS rebinding); in `api_keys` mode only when the list is not empty.
     */
    allowed_hosts: z.array(allowedHostSchema).default([]),
    /** Port to bind (0 picks a free one); `antler serve --port` overrides. */
    port: z.number().int().min(0).max(65535).default(8001),
    auth: gatewayAuthSchema.default({
      mode: "api_keys",
      api_keys: [],
      user: "default",
      admins: [],
      allow_none_on_network: false,
      session_ttl_seconds: 12 * 3600,
      session_cookie_secure: "auto",
    }),
    cors: z
      .strictObject({
        /** Origins allowed to call the API from a browser; `*` allows any. Empty: no CORS headers. */
        allow_origins: z.array(z.string().min(1)).default([]),
      })
      .default({ allow_origins: [] }),
    /** Largest JSON request body, in bytes. */
    max_json_bytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    stream_bridge: streamBridgeSchema.default({ type: "sql" }),
    run_events: runEventsConfigSchema.default({
      retention_hours: 24,
      max_events_per_run: 10_000,
      sweep_interval_seconds: 600,
      flush_interval_ms: 20,
      poll_interval_ms: 100,
    }),
    /** Seconds between SSE keep-alive comments while a run is quiet. */
    sse_keepalive_seconds: z.number().positive().default(15),
    /**
     * How instances on one database vouch for their runs. Give every instance the same values: a cancel sent to
     * one instance waits `cancel_wait_seconds` for the owner, which reads it at its next heartbeat.
     */
    runs: z
      .strictObject({
        /** How often an instance renews its live runs' leases and reads cancel requests. */
        heartbeat_seconds: z.number().positive().max(300).default(5),
        /** A run whose lease is this old counts as orphaned (its process died); default 3 heartbeats. */
        lease_seconds: z.number().positive().max(3600).optional(),
        /** How long a cancel for another instance's run waits before answering 202; default heartbeat + 2 s. */
        cancel_wait_seconds: z.number().positive().max(300).optional(),
        /**
         * Most runs (running or queued) this instance holds at once; past it a new run is refused with 503 and
         * Retry-After before it starts. Default: 10 × storage.postgres.pool.max on PostgreSQL (200), no limit otherwise.
         */
        max_active: z
          .number({ error: "must be a whole number of runs, e.g. 80" })
          .int("must be a whole number of runs, e.g. 80")
          .min(1, "must be at least 1 (leave it out for the default derived from storage.postgres.pool.max)")
          .max(100_000, "must be at most 100000")
          .optional(),
        /**
         * How many times a run may be started: when the instance running it stops (its lease expires), a live
         * instance takes it over and continues it from its last checkpoint, up to this many attempts in all; then
         * it ends as an error (ANTLER_ERR_RUN_ATTEMPTS_EXHAUSTED). 1: a stopped instance's runs end as errors.
         */
        max_attempts: z
          .number({ error: "must be a whole number of attempts, e.g. 3" })
          .int("must be a whole number of attempts, e.g. 3")
          .min(1, "must be at least 1 (1: never take a run over)")
          .max(100, "must be at most 100")
          .default(3),
        /**
         * Whether this instance executes runs. `true` (default): a run it accepts starts here at once, and it also
         * executes runs queued by other instances when it has room. `false`: it executes none; a run it accepts is
         * queued in the database for `antler worker` (or a gateway with `execute: true`), and the request streams it
         * from the run event log. Needs `stream_bridge` sql or redis.
         */
        execute: z
          .boolean({ error: "must be true (this instance executes runs) or false (it queues them for antler worker)" })
          .default(true),
        /**
         * What a shutdown (SIGTERM, SIGINT) does to the runs this instance is executing. `hand_over` (default): they
         * stop here without ending; another instance (or this one after a restart) takes each over at once and
         * continues it from its last checkpoint, and streams end with ANTLER_ERR_RUN_HANDED_OVER so clients join
         * again. `cancel`: they end cancelled.
         */
        on_shutdown: z
          .enum(["hand_over", "cancel"], { error: "must be hand_over (runs continue elsewhere) or cancel (runs end cancelled)" })
          .default("hand_over"),
      })
      .refine((r) => r.lease_seconds === undefined || r.lease_seconds > r.heartbeat_seconds, {
        message: "lease_seconds must be longer than heartbeat_seconds (about three heartbeats)",
        path: ["lease_seconds"],
      })
      .default({ heartbeat_seconds: 5, max_attempts: 3, execute: true, on_shutdown: "hand_over" }),
  })
  .superRefine((config, issues) => {
    // A run queued for a worker reaches its caller only through the log the worker writes its events to.
    if (!config.runs.execute && config.stream_bridge.type === "none") {
      issues.addIssue({
        code: "custom",
        path: ["runs", "execute"],
        message:
          "runs.execute false needs a run event log to stream queued runs from, but stream_bridge is none; set stream_bridge to sql (the default) or { type: redis, redis_url: ... }, or leave runs.execute true",
      });
    }
    // With no key to ask for, CORS for every origin would let any web page read and drive the API.
    if (config.auth.mode === "none" && config.cors.allow_origins.includes("*")) {
      issues.addIssue({
        code: "custom",
        path: ["cors", "allow_origins"],
        message:
          "cors.allow_origins `*` is refused with auth.mode none: any web page could read and drive the key-less API; list the origins that may call it",
      });
    }
  });

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;
