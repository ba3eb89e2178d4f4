import { type RunningGateway, startGateway } from "@antler/plugin-gateway";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryConfigResponseSchema, memoryExportSchema, memoryResponseSchema, memoryStatusResponseSchema } from "../src/index.js";
import { type Harness, harness, tempDir } from "./helpers.js";

const ALICE = "alice-key-0123456789abcdef";
const BOB = "bob-key-0123456789abcdef00";

let dir: ReturnType<typeof tempDir>;
let h: Harness;
let gateway: RunningGateway;

beforeEach(async () => {
  dir = tempDir();
  h = await harness({ baseDir: dir.path });
  gateway = await startGateway({
    client: h.client,
    config: {
      port: 0,
      auth: {
        mode: "api_keys",
        api_keys: [
          { key: ALICE, user: "alice" },
          { key: BOB, user: "bob" },
        ],
      },
    },
    shutdownGraceMs: 500,
  });
});

afterEach(async () => {
  await gateway.close();
  await h.close();
  dir.remove();
});

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies of many shapes, checked field by field below.
type Json = any;

async function call(path: string, init: { key?: string; method?: string; json?: unknown } = {}): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${gateway.url}/api${path}`, {
    method: init.method ?? (init.json === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${init.key ?? ALICE}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

describe("/api/memory over HTTP", () => {
  it("creates, reads, searches, updates and deletes the caller's facts, redacting secrets before they are stored", async () => {
    const created = await call("/memory/facts", {
      json: { content: "Deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789; prefers blue-green deploys", category: "knowledge" },
    });
    expect(created.status).toBe(201);
    expect(created.body.content).toBe("Deploy token is [REDACTED]; prefers blue-green deploys");
    const id = created.body.id as string;
    expect((await call(`/memory/facts/${id}`)).body.content).not.toContain("ghp_");
    const patched = await call(`/memory/facts/${id}`, {
      method: "PATCH",
      json: { content: "Bearer abcdefghijklmnop0123 works for staging" },
    });
    expect(patched.body.content).toBe("Bearer [REDACTED] works for staging");
    const searched = await call("/memory/facts?query=staging%20credentials");
    expect(searched.body.facts.map((f: Json) => f.id)).toEqual([id]);
    const memory = await call("/memory");
    expect(memoryResponseSchema.parse(memory.body).facts.map((f) => f.id)).toEqual([id]);
    // Nothing stored anywhere holds the secret: the whole export is clean.
    expect(JSON.stringify((await call("/memory/export")).body)).not.toMatch(/ghp_|abcdefghijklmnop0123/);
    expect(await call(`/memory/facts/${id}`, { method: "DELETE" })).toEqual({ status: 200, body: { id, deleted: true } });
    expect((await call(`/memory/facts/${id}`)).status).toBe(404);
  });

  it("answers 404 for another user's fact on every fact route and never shows it in their memory", async () => {
    const id = (await call("/memory/facts", { json: { content: "Alice's private fact" } })).body.id as string;
    for (const [method, json] of [
      ["GET", undefined],
      ["PATCH", { content: "bob was here" }],
      ["DELETE", undefined],
    ] as const) {
      const response = await call(`/memory/facts/${id}`, { key: BOB, method, ...(json ? { json } : {}) });
      expect(response.status, method).toBe(404);
      expect(response.body.error.code).toBe("ANTLER_ERR_MEMORY_NOT_FOUND");
    }
    expect((await call("/memory", { key: BOB })).body.facts).toEqual([]);
    expect((await call("/memory/facts?query=private", { key: BOB })).body.facts).toEqual([]);
    expect((await call(`/memory/facts/${id}`)).body.content).toBe("Alice's private fact");
  });

  it("exports and imports over HTTP (merge and replace), refusing a malformed file with 400 and writing nothing", async () => {
    await call("/memory/facts", { json: { content: "Speaks Portuguese", category: "knowledge" } });
    const exported = memoryExportSchema.parse((await call("/memory/export")).body);
    const bad = await call("/memory/import", { json: { ...exported, facts: [{ ...exported.facts[0], confidence: 7 }] } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/confidence/);
    const intoBob = await call("/memory/import", { key: BOB, json: exported });
    expect(intoBob.status).toBe(200);
    expect(intoBob.body.facts.map((f: Json) => f.content)).toEqual(["Speaks Portuguese"]);
    const cleared = await call("/memory", { method: "DELETE" });
    expect(cleared.body.facts).toEqual([]);
    const restored = await call("/memory/import?mode=replace", { json: exported });
    expect(restored.body.facts).toEqual(exported.facts);
  });

  it("keeps a custom agent's memory apart with ?agent= and refuses a bad agent name with 400", async () => {
    await call("/memory/facts?agent=chef", { json: { content: "Bakes sourdough" } });
    expect((await call("/memory?agent=chef")).body.facts.map((f: Json) => f.content)).toEqual(["Bakes sourdough"]);
    expect((await call("/memory")).body.facts).toEqual([]);
    const bad = await call("/memory?agent=..%2Fx");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("ANTLER_ERR_MEMORY_INVALID");
  });

  it("answers config and status, lists its routes in GET /api, and refuses a bad fact body with 400", async () => {
    expect(memoryConfigResponseSchema.parse((await call("/memory/config")).body)).toMatchObject({ mode: "middleware", retrieval: "fts5" });
    expect(memoryStatusResponseSchema.parse((await call("/memory/status")).body)).toMatchObject({ user_id: "alice", fact_count: 0 });
    const index = JSON.stringify((await call("")).body);
    for (const route of [
      "/api/memory",
      "/api/memory/facts",
      "/api/memory/facts/:id",
      "/api/memory/export",
      "/api/memory/import",
      "/api/memory/config",
      "/api/memory/status",
    ]) {
      expect(index).toContain(`"${route}"`);
    }
    const empty = await call("/memory/facts", { json: { content: "   " } });
    expect(empty.status).toBe(400);
    expect(JSON.stringify(empty.body)).toMatch(/content is empty/);
    const category = await call("/memory/facts", { json: { content: "x", category: "gossip" } });
    expect(category.status).toBe(400);
    expect((await call("/memory")).body.facts).toEqual([]);
  });
});
