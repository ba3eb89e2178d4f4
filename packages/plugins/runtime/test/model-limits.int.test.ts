import { randomUUID } from "node:crypto";
import { ErrorCodes, isAntlerError, type KernelConfigInput } from "@antler/kernel";
import {
  describeWithRedis,
  type OpenAICompatibleServer,
  type OpenAIServerOptions,
  startOpenAICompatibleServer,
} from "@antler/kernel/testing";
import openaiPlugin from "@antler/plugin-openai";
import { Redis } from "ioredis";
import { afterEach, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import { tempDir } from "./fixtures.js";

type ModelEntry = NonNullable<KernelConfigInput["models"]>[number];

const clients: AntlerClient[] = [];
const servers: OpenAICompatibleServer[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(options: OpenAIServerOptions): Promise<OpenAICompatibleServer> {
  const s = await startOpenAICompatibleServer(options);
  servers.push(s);
  return s;
}

async function client(model: ModelEntry, extra: Record<string, unknown> = {}): Promise<AntlerClient> {
  const dir = tempDir();
  const c = await AntlerClient.create({
    // Model failures end the run as errors here (no apology message), so a refused call is visible as one.
    config: {
      base_dir: dir,
      models: [model],
      storage: { backend: "memory" },
      title: { enabled: false },
      llm_error_handling: { enabled: false },
      ...extra,
    },
    plugins: [openaiPlugin],
    cwd: dir,
    env: {},
    discover: false,
  });
  clients.push(c);
  return c;
}

const completions = (s: OpenAICompatibleServer) => s.requests.filter((r) => r.path === "/v1/chat/completions");
const gpt = (s: OpenAICompatibleServer, extra: Partial<ModelEntry> = {}): ModelEntry => ({
  name: "gpt",
  provider: "openai",
  model: "gpt-id",
  base_url: s.url,
  api_key: "sk-test",
  max_retries: 0,
  ...extra,
});

describeWithRedis("requests_per_minute shared through Redis", (redisUrl) => {
  const prefix = `antler-test-${randomUUID()}:`;
  afterEach(async () => {
    const redis = new Redis(redisUrl);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it("two clients on one Redis share the window: the third call in the minute is refused, whichever client makes it", async () => {
    const s = await server({ handler: () => ({ text: "ok" }) });
    const limits = { model_limits: { redis_url: redisUrl, key_prefix: prefix } };
    const a = await client(gpt(s, { requests_per_minute: 2, queue_timeout_seconds: 0 }), limits);
    const b = await client(gpt(s, { requests_per_minute: 2, queue_timeout_seconds: 0 }), limits);
    await a.invoke("a1", { threadId: "ta" });
    await b.invoke("b1", { threadId: "tb" });
    const thrown = await a.invoke("a2", { threadId: "ta" }).catch((e: unknown) => e);
    // LangChain's agent wraps a model failure in its MiddlewareError, with ours as the cause.
    const refused = isAntlerError(thrown) ? thrown : (thrown as Error).cause;
    expect(isAntlerError(refused, ErrorCodes.MODEL_CALL_FAILED)).toBe(true);
    expect(isAntlerError((refused as Error).cause, ErrorCodes.MODEL_RATE_LIMITED)).toBe(true);
    expect((refused as Error).message).toContain("(gpt: rate_limited)");
    expect(completions(s)).toHaveLength(2);
    // The window lives in Redis under the configured prefix, with the minute's expiry.
    const redis = new Redis(redisUrl);
    try {
      expect(await redis.get(`${prefix}model-rpm:gpt`)).toBe("2");
      expect(await redis.pttl(`${prefix}model-rpm:gpt`)).toBeGreaterThan(0);
    } finally {
      await redis.quit();
    }
  });

  it("without Redis the same two clients count apart: each may make two calls", async () => {
    const s = await server({ handler: () => ({ text: "ok" }) });
    const a = await client(gpt(s, { requests_per_minute: 2, queue_timeout_seconds: 0 }));
    const b = await client(gpt(s, { requests_per_minute: 2, queue_timeout_seconds: 0 }));
    for (const [c, t] of [
      [a, "ta"],
      [b, "tb"],
      [a, "ta"],
      [b, "tb"],
    ] as const)
      await c.invoke("x", { threadId: t });
    expect(completions(s)).toHaveLength(4);
  });
});
