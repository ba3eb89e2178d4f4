import { AntlerError, describeCause, ErrorCodes } from "@antler/kernel";
import type { Redis } from "ioredis";
import type { EventTail, LoggedEvent, RunEventStore } from "./store.js";

type Entry = [id: string, fields: string[]];

/** `redis://user:secret@host:6379/0` → `host:6379/0`: never a credential in a message. */
export function redisLocation(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    return "(unparsable redis_url)";
  }
}

/**
 * Run events in Redis Streams: one stream per run (`<prefix>run-events:<run_id>`), entry ids `0-<seq>` so the
 * SSE id and the stream id are the same number, `MAXLEN` keeping the newest `max_events_per_run`, and the key
 * expiring `retention_hours` after its last write. A joiner on another instance waits with `XREAD BLOCK` on a
 * connection of its own (a blocked connection serves nothing else).
 */
export async function openRedisRunEventStore(options: {
  url: string;
  keyPrefix: string;
  maxEventsPerRun: number;
  retentionSeconds: number;
}): Promise<RunEventStore> {
  const { Redis: RedisClient } = await import("ioredis");
  const where = redisLocation(options.url);
  const connect = async (): Promise<Redis> => {
    // RESP2: the reply shapes parsed below (XREAD is `[[key, entries]]`) are the same on every Redis version.
    const redis = new RedisClient(options.url, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 5000, protocol: 2 });
    // Reconnects are ioredis' business; their errors would otherwise be unhandled 'error' events.
    redis.on("error", () => undefined);
    try {
      await redis.connect();
    } catch (cause) {
      redis.disconnect();
      throw new AntlerError(
        ErrorCodes.STORAGE_UNAVAILABLE,
        `cannot reach Redis at ${where} for the run event log: ${describeCause(cause)}`,
        {
          where: "@antler/plugin-gateway config.stream_bridge.redis_url",
          hint: "Start Redis or fix stream_bridge.redis_url, or use `stream_bridge: sql` to keep run events in Antler's database.",
          cause,
        },
      );
    }
    return redis;
  };
  const redis = await connect();
  const key = (runId: string) => `${options.keyPrefix}run-events:${runId}`;
  const toEvents = (entries: Entry[] | null): LoggedEvent[] =>
    (entries ?? []).map(([id, fields]) => {
      const record: Record<string, string> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) record[fields[i] as string] = fields[i + 1] as string;
      return { seq: Number(id.split("-")[1]), event: record.e ?? "message", json: record.d ?? "null" };
    });
  const tails = new Set<Redis>();
  return {
    kind: "redis",
    async append(events) {
      if (events.length === 0) return;
      const pipeline = redis.pipeline();
      const runs = new Set<string>();
      for (const e of events) {
        runs.add(e.runId);
        pipeline.call("XADD", key(e.runId), "MAXLEN", String(options.maxEventsPerRun), `0-${e.seq}`, "e", e.event, "d", e.json);
      }
      for (const runId of runs) pipeline.call("EXPIRE", key(runId), String(options.retentionSeconds));
      const results = (await pipeline.exec()) ?? [];
      for (const [error] of results) {
        // A retried batch meets the entries that made it the first time: they are already there, in order.
        if (error && !/equal or smaller than the target stream top item/i.test(error.message)) throw error;
      }
    },
    async read(runId, afterSeq, limit) {
      return toEvents((await redis.call("XRANGE", key(runId), `(0-${afterSeq}`, "+", "COUNT", String(limit))) as Entry[]);
    },
    async bounds(runId) {
      const [first] = (await redis.call("XRANGE", key(runId), "-", "+", "COUNT", "1")) as Entry[];
      const [last] = (await redis.call("XREVRANGE", key(runId), "+", "-", "COUNT", "1")) as Entry[];
      if (!first || !last) return null;
      return { first: Number(first[0].split("-")[1]), last: Number(last[0].split("-")[1]) };
    },
    tail(runId): EventTail {
      let connection: Promise<Redis> | undefined;
      let closed = false;
      return {
        async next(afterSeq, limit, waitMs) {
          if (closed) return [];
          connection ??= (async () => {
            const blocking = redis.duplicate();
            blocking.on("error", () => undefined);
            tails.add(blocking);
            return blocking;
          })();
          const blocking = await connection;
          try {
            const answer = (await blocking.call(
              "XREAD",
              "COUNT",
              String(limit),
              "BLOCK",
              String(Math.max(1, Math.round(waitMs))),
              "STREAMS",
              key(runId),
              `0-${afterSeq}`,
            )) as Array<[string, Entry[]]> | null;
            return toEvents(answer?.[0]?.[1] ?? null);
          } catch (error) {
            if (closed) return [];
            throw error;
          }
        },
        close() {
          closed = true;
          void connection?.then((blocking) => {
            tails.delete(blocking);
            blocking.disconnect();
          });
        },
      };
    },
    async trim() {
      // XADD's MAXLEN already keeps the newest max_events_per_run.
    },
    async prune() {
      // Each run's stream expires retention_hours after its last write.
      return 0;
    },
    async close() {
      for (const blocking of tails) blocking.disconnect();
      tails.clear();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
