import { AntlerError, describeCause, ErrorCodes, type Logger } from "@antler/kernel";
import type { ModelRateStore } from "@antler/model-kit";

// One fixed window per model, opened by its first request and expiring a minute later: INCR, and on the first
// request PEXPIRE; past the limit, the increment is taken back and the window's remaining time is the wait.
// Atomic in Redis, so every instance on it shares each model's window without clock agreement.
const TAKE = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 1 then return 1 end
  return ttl
end
return 0`;

function location(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    return "(unparsable redis_url)";
  }
}

/**
 * `requests_per_minute` counted in Redis. Connecting fails with STORAGE_UNAVAILABLE; once connected, a Redis error
 * in a call is logged and that call is counted in process (`fallback`), so a Redis outage never fails model calls.
 */
export async function openRedisRateStore(options: {
  url: string;
  keyPrefix: string;
  logger: Logger;
  fallback: ModelRateStore;
}): Promise<ModelRateStore & { close(): Promise<void> }> {
  const { Redis } = await import("ioredis");
  const redis = new Redis(options.url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  redis.on("error", () => undefined); // reconnects are ioredis' business
  try {
    await redis.connect();
  } catch (cause) {
    redis.disconnect();
    throw new AntlerError(
      ErrorCodes.STORAGE_UNAVAILABLE,
      `cannot reach Redis at ${location(options.url)} for model limits: ${describeCause(cause)}`,
      {
        where: "model_limits.redis_url",
        hint: "Start Redis or fix model_limits.redis_url, or remove it to count requests_per_minute in process.",
        cause,
      },
    );
  }
  let warned = false;
  return {
    async takeRequest(model, perMinute) {
      try {
        const wait = await redis.eval(TAKE, 1, `${options.keyPrefix}model-rpm:${model}`, String(perMinute));
        return Number(wait);
      } catch (err) {
        if (!warned) options.logger.warn({ err, model }, "Redis failed for model limits; counting requests per minute in process");
        warned = true;
        return options.fallback.takeRequest(model, perMinute);
      }
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
