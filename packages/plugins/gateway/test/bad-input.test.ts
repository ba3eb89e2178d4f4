import { errorResponseSchema } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { clientOptionsOf, parseGatewayConfig, runLeasesOf } from "../src/index.js";
import { startTestGateway } from "./fixtures.js";

async function errorOf(response: Response) {
  return errorResponseSchema.parse(await response.json()).error;
}

describe("bad input gets a clear, coded error", () => {
  it("bad JSON is a 400 that says so", async () => {
    const gw = await startTestGateway();
    const response = await gw.call("/api/threads", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    expect(response.status).toBe(400);
    const error = await errorOf(response);
    expect(error.code).toBe("ANTLER_ERR_GATEWAY_BAD_JSON");
    expect(error.message).toContain("not valid JSON");
  });

  it("a body that misses the message, or has a bad thread id, is a 400 naming the field", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const noMessage = await gw.call("/api/threads/t/runs/stream", { method: "POST", json: { model: "m" } });
    expect(noMessage.status).toBe(400);
    expect((await errorOf(noMessage)).message).toBe("input: give the user's message as `message` or `input.messages`");
    const badId = await gw.call("/api/threads", { method: "POST", json: { thread_id: "../etc" } });
    expect(badId.status).toBe(400);
    expect((await errorOf(badId)).message).toMatch(/^thread_id: /);
    const unknownKey = await gw.call("/api/threads", { method: "POST", json: { thread: "x" } });
    expect(unknownKey.status).toBe(400);
  });

  it("an unknown model is a 400 listing the configured models, before any stream starts", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const response = await gw.call("/api/threads/t/runs/stream", { method: "POST", json: { message: "hi", model: "gpt-9" } });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/json");
    const error = await errorOf(response);
    expect(error).toMatchObject({
      code: "ANTLER_ERR_MODEL_NOT_FOUND",
      message: 'model "gpt-9" is not configured',
      hint: "Configured models: m.",
    });
    expect(gw.client.activeRuns).toBe(0);
  });

  it("an upload over the size limit is a 413, too many files a 400, and a non-multipart body a 400", async () => {
    const gw = await startTestGateway({ kernelConfig: { uploads: { max_file_bytes: 1024, max_files: 2 } } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const big = new FormData();
    big.append("files", new Blob([new Uint8Array(1025)]), "big.bin");
    const tooBig = await gw.call("/api/threads/t/uploads", { method: "POST", body: big });
    expect(tooBig.status).toBe(413);
    const bigError = await errorOf(tooBig);
    expect(bigError).toMatchObject({
      code: "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE",
      // Refused as the bytes arrive, so the message names the limit, not the final size.
      message: "big.bin is over the limit of 1024 bytes",
    });
    expect(bigError.hint).toContain("max_file_bytes");

    const three = new FormData();
    for (const name of ["a.txt", "b.txt", "c.txt"]) three.append("files", new Blob(["x"]), name);
    const tooMany = await gw.call("/api/threads/t/uploads", { method: "POST", body: three });
    expect(tooMany.status).toBe(400);
    expect((await errorOf(tooMany)).message).toBe("3 files in one upload, over the limit of 2");

    // The per-thread count limit holds across requests too, with the kernel's message (no server paths).
    for (const name of ["a.txt", "b.txt"]) {
      const one = new FormData();
      one.append("files", new Blob(["x"]), name);
      expect((await gw.call("/api/threads/t/uploads", { method: "POST", body: one })).status).toBe(201);
    }
    const third = new FormData();
    third.append("files", new Blob(["x"]), "c.txt");
    const full = await gw.call("/api/threads/t/uploads", { method: "POST", body: third });
    expect(full.status).toBe(400);
    const fullError = await errorOf(full);
    expect(fullError.code).toBe("ANTLER_ERR_UPLOAD_INVALID");
    expect(fullError.message).toContain("already holds 2 uploads (limit 2)");
    expect(JSON.stringify(fullError)).not.toContain("antler-upload-");

    const notMultipart = await gw.call("/api/threads/t/uploads", { method: "POST", json: { file: "x" } });
    expect(notMultipart.status).toBe(400);
    expect((await errorOf(notMultipart)).message).toBe("uploads must be multipart/form-data");
  });

  it("path traversal in an artifact path is a 400 PATH_UNSAFE, however it is encoded", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    for (const path of [
      "mnt/user-data/outputs/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
      "mnt%2Fuser-data%2Foutputs%2F..%2F..%2Fuser-data%2F..%2F..%2Fsecret",
      "etc/passwd",
      "mnt/user-data/other/file.txt",
    ]) {
      const response = await gw.call(`/api/threads/t/artifacts/${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
      expect((await errorOf(response)).code).toBe("ANTLER_ERR_PATH_UNSAFE");
    }
  });

  it("an oversize JSON body is a 413 and an unknown route a JSON 404", async () => {
    const gw = await startTestGateway({ config: { max_json_bytes: 100 } });
    const large = await gw.call("/api/threads", { method: "POST", json: { metadata: { text: "x".repeat(200) } } });
    expect(large.status).toBe(413);
    const missing = await gw.call("/api/nowhere");
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).message).toBe("no route for GET /api/nowhere");
  });

  it("POST /api/threads with if_exists raise is a 409 for an existing id, and returns it otherwise", async () => {
    const gw = await startTestGateway();
    expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } })).status).toBe(201);
    expect((await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } })).status).toBe(200);
    const conflict = await gw.call("/api/threads", { method: "POST", json: { thread_id: "t", if_exists: "raise" } });
    expect(conflict.status).toBe(409);
    expect((await errorOf(conflict)).message).toBe('thread "t" already exists');
  });
});

describe("runs: lease timings in the gateway config", () => {
  it("defaults to a 5 s heartbeat, maps seconds to the client's milliseconds, and refuses a lease no longer than the heartbeat", () => {
    const defaults = parseGatewayConfig({ auth: { mode: "none" } });
    expect(runLeasesOf(defaults)).toEqual({ heartbeatMs: 5000 });
    const tuned = parseGatewayConfig({ auth: { mode: "none" }, runs: { heartbeat_seconds: 2, lease_seconds: 9, cancel_wait_seconds: 4 } });
    expect(runLeasesOf(tuned)).toEqual({ heartbeatMs: 2000, leaseMs: 9000, cancelWaitMs: 4000 });
    let error: unknown;
    try {
      parseGatewayConfig({ auth: { mode: "none" }, runs: { heartbeat_seconds: 10, lease_seconds: 10 } });
    } catch (e) {
      error = e;
    }
    expect(String((error as Error).message)).toMatch(/runs\.lease_seconds.*longer than heartbeat_seconds/s);
  });
});

describe("runs.max_attempts in the gateway config", () => {
  it("reaches the client when set", () => {
    expect(clientOptionsOf(parseGatewayConfig({ auth: { mode: "none" }, runs: { max_attempts: 1 } })).maxAttempts).toBe(1);
  });

  it.each([
    [0, "must be at least 1"],
    [1.5, "must be a whole number of attempts"],
    [101, "must be at most 100"],
  ])("rejects max_attempts %s at runs.max_attempts, saying what is allowed", (value, message) => {
    expect(() => parseGatewayConfig({ auth: { mode: "none" }, runs: { max_attempts: value } })).toThrow(
      new RegExp(`runs\\.max_attempts.*${message}`, "s"),
    );
  });
});

describe("runs.execute in the gateway config", () => {
  it("defaults to true (this instance executes runs) and accepts false", () => {
    expect(parseGatewayConfig({ auth: { mode: "none" } }).runs.execute).toBe(true);
    expect(parseGatewayConfig({ auth: { mode: "none" }, runs: { execute: false } }).runs.execute).toBe(false);
  });

  it.each([["yes"], [1], [null]])("rejects execute %j at runs.execute, saying what is allowed", (value) => {
    expect(() => parseGatewayConfig({ auth: { mode: "none" }, runs: { execute: value as never } })).toThrow(
      /runs\.execute.*must be true \(this instance executes runs\) or false \(it queues them for antler worker\)/s,
    );
  });

  it("refuses execute false without a run event log to stream queued runs from", () => {
    expect(() => parseGatewayConfig({ auth: { mode: "none" }, stream_bridge: "none", runs: { execute: false } })).toThrow(
      /runs\.execute.*needs a run event log.*stream_bridge is none/s,
    );
  });
});

describe("runs.max_active in the gateway config", () => {
  it("is left to the client's default (derived from storage.postgres.pool.max) unless set, and reaches the client when set", () => {
    expect(clientOptionsOf(parseGatewayConfig({ auth: { mode: "none" } }))).toEqual({
      runLeases: { heartbeatMs: 5000 },
      maxAttempts: 3,
    });
    expect(clientOptionsOf(parseGatewayConfig({ auth: { mode: "none" }, runs: { max_active: 40 } }))).toEqual({
      runLeases: { heartbeatMs: 5000 },
      maxActiveRuns: 40,
      maxAttempts: 3,
    });
  });

  it.each([
    [0, "must be at least 1"],
    [2.5, "must be a whole number of runs"],
    ["many", "must be a whole number of runs"],
  ])("rejects max_active %s at runs.max_active, saying what is allowed", (value, message) => {
    let error: unknown;
    try {
      parseGatewayConfig({ auth: { mode: "none" }, runs: { max_active: value as number } });
    } catch (e) {
      error = e;
    }
    expect(String((error as Error).message)).toMatch(new RegExp(`runs\\.max_active.*${message}`, "s"));
  });
});

describe("a run refused at the instance's run limit", () => {
  it("is a 503 with Retry-After and the coded body, on both run routes, and leaves no run record", async () => {
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const gw = await startTestGateway({
      script: {
        respond: async () => {
          await answered;
          return { text: "done" };
        },
      },
      client: { maxActiveRuns: 1 },
    });
    for (const id of ["busy", "other"]) await gw.call("/api/threads", { method: "POST", json: { thread_id: id } });
    const first = await gw.call("/api/threads/busy/runs/stream", { method: "POST", json: { message: "hold" } });
    expect(first.status).toBe(200);
    for (const route of ["stream", "wait"]) {
      const refused = await gw.call(`/api/threads/other/runs/${route}`, { method: "POST", json: { message: "hi" } });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("2");
      expect(await errorOf(refused)).toMatchObject({ code: "ANTLER_ERR_RUNS_AT_CAPACITY", details: { max_active_runs: 1 } });
    }
    expect(((await (await gw.call("/api/threads/other/runs")).json()) as { runs: unknown[] }).runs).toEqual([]);
    answer();
    await first.text();
  });
});
