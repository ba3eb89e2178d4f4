import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ErrorCodes, ensureTraceContext, isAntlerError } from "@antler/kernel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AioClient, ProvisionerClient } from "../src/index.js";
import { FakeAioServer } from "./fake-aio-server.js";

async function rejectionOf(
  promise: Promise<unknown>,
): Promise<Error & { code?: string; details?: Record<string, unknown>; hint?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; details?: Record<string, unknown>; hint?: string };
  }
  throw new Error("expected a rejection");
}

describe("AioClient against the loopback AIO API", () => {
  let server: FakeAioServer;
  let client: AioClient;
  let home: string;

  beforeEach(async () => {
    server = await FakeAioServer.start();
    const box = await server.addSandbox("client-box");
    home = box.home;
    client = new AioClient({ baseUrl: box.baseUrl, timeoutMs: 2_000 });
  });

  afterEach(async () => {
    await server.close();
  });

  it("reads the container's home from GET /v1/sandbox", async () => {
    const context = await client.context();
    expect(context.home_dir).toBe(home);
    expect(server.requests.at(-1)).toMatchObject({ method: "GET", path: "/sandboxes/client-box/v1/sandbox" });
  });

  it("round-trips text and base64 through /v1/file/write, /v1/file/read and /v1/file/download", async () => {
    await client.writeFile({ file: `${home}/a.txt`, content: "one\ntwo\nthree\n" });
    expect((await client.readFile({ file: `${home}/a.txt`, start_line: 1, end_line: 2 })).content).toBe("two\n");
    await client.writeFile({ file: `${home}/b.bin`, content: Buffer.from([0, 255, 1]).toString("base64"), encoding: "base64" });
    expect(Array.from(await client.downloadFile(`${home}/b.bin`))).toEqual([0, 255, 1]);
  });

  it("sends the ambient trace id as X-Trace-Id, and none outside a trace scope", async () => {
    await ensureTraceContext("trace-aio-123", () => client.context());
    expect(server.requests.at(-1)?.traceId).toBe("trace-aio-123");
    await client.context();
    expect(server.requests.at(-1)?.traceId).toBeUndefined();
  });

  it("turns a FileOperationError answer into SANDBOX_EXEC_FAILED with the errno", async () => {
    const err = await rejectionOf(client.readFile({ file: `${home}/missing.txt` }));
    expect(err.code).toBe(ErrorCodes.SANDBOX_EXEC_FAILED);
    expect(err.message).toContain(`${home}/missing.txt`);
    expect(err.details).toMatchObject({ errno: "ENOENT", endpoint: "/v1/file/read" });
  });

  it.each([
    [401, { detail: "invalid API key" }, ErrorCodes.SANDBOX_UNAVAILABLE, /credentials/],
    [404, { detail: "Not Found" }, ErrorCodes.SANDBOX_NOT_FOUND, /gone/],
    [503, { success: false, message: "busy" }, ErrorCodes.SANDBOX_UNAVAILABLE, /overloaded/],
    [422, { detail: [{ loc: ["body", "file"], msg: "Field required", type: "missing" }] }, ErrorCodes.SANDBOX_EXEC_FAILED, /rejected/],
  ])("maps HTTP %i to a coded error with the status and a hint", async (status, body, code, hint) => {
    server.fail("/v1/file/read", { status, body });
    const err = await rejectionOf(client.readFile({ file: `${home}/x` }));
    expect(err.code).toBe(code);
    expect(err.details?.status).toBe(status);
    expect(err.hint).toMatch(hint);
    expect(err.message).toContain(`HTTP ${status}`);
  });

  it("quotes the server's message from the error body", async () => {
    server.fail("/v1/file/read", { status: 422, body: { detail: [{ loc: ["body", "file"], msg: "Field required", type: "missing" }] } });
    expect((await rejectionOf(client.readFile({ file: "" }))).message).toContain("body.file: Field required");
  });

  it("rejects a body that does not match the schema with SANDBOX_EXEC_FAILED", async () => {
    server.fail("/v1/sandbox", { status: 200, body: { success: true, version: "x" } });
    const err = await rejectionOf(client.context());
    expect(err.code).toBe(ErrorCodes.SANDBOX_EXEC_FAILED);
    expect(err.message).toContain("home_dir");
  });

  it("reports success: false envelopes as SANDBOX_EXEC_FAILED", async () => {
    server.fail("/v1/bash/kill", { status: 200, body: { success: false, message: "no such session" } });
    const err = await rejectionOf(client.bashKill({ session_id: "nope" }));
    expect(err.code).toBe(ErrorCodes.SANDBOX_EXEC_FAILED);
    expect(err.message).toContain("no such session");
  });
});

describe("AioClient transport failures", () => {
  let hanging: Server | undefined;

  afterEach(async () => {
    hanging?.closeAllConnections();
    await new Promise<void>((resolve) => (hanging ? hanging.close(() => resolve()) : resolve()));
    hanging = undefined;
  });

  it("an unreachable sandbox is SANDBOX_UNAVAILABLE", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const err = await rejectionOf(new AioClient({ baseUrl: `http://127.0.0.1:${port}` }).context());
    expect(err.code).toBe(ErrorCodes.SANDBOX_UNAVAILABLE);
    expect(err.message).toContain("unreachable");
  });

  it("a sandbox that never answers times out as SANDBOX_UNAVAILABLE", async () => {
    hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging?.listen(0, "127.0.0.1", resolve));
    const port = (hanging.address() as AddressInfo).port;
    const err = await rejectionOf(new AioClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 150 }).context());
    expect(err.code).toBe(ErrorCodes.SANDBOX_UNAVAILABLE);
    expect(err.details?.timedOut).toBe(true);
  });

  it("a base URL that is not a URL is CONFIG_INVALID", () => {
    let caught: unknown;
    try {
      new AioClient({ baseUrl: "not a url" });
    } catch (error) {
      caught = error;
    }
    expect(isAntlerError(caught, ErrorCodes.CONFIG_INVALID)).toBe(true);
  });
});

describe("ProvisionerClient", () => {
  let server: FakeAioServer;

  beforeEach(async () => {
    server = await FakeAioServer.start({ provisionerApiKey: "s3cret" });
  });

  afterEach(async () => {
    await server.close();
  });

  it("creates, reads and deletes a sandbox with the bearer key", async () => {
    const client = new ProvisionerClient({ baseUrl: server.url, apiKey: "s3cret" });
    const created = await client.create({ sandbox_id: "sbx-1", thread_id: "t1", user_id: "u1" });
    expect(created).toMatchObject({ sandbox_id: "sbx-1", status: "Running", sandbox_url: `${server.url}/sandboxes/sbx-1` });
    expect((await client.get("sbx-1")).status).toBe("Running");
    expect(await client.delete("sbx-1")).toMatchObject({ ok: true, sandbox_id: "sbx-1" });
    expect(server.requests.every((r) => r.authorization === "Bearer s3cret")).toBe(true);
    const gone = await rejectionOf(client.get("sbx-1"));
    expect(gone.code).toBe(ErrorCodes.SANDBOX_NOT_FOUND);
  });

  it("a wrong key is SANDBOX_UNAVAILABLE pointing at provisioner_api_key", async () => {
    const client = new ProvisionerClient({ baseUrl: server.url, apiKey: "wrong" });
    const err = await rejectionOf(client.create({ thread_id: "t1", user_id: "u1" }));
    expect(err.code).toBe(ErrorCodes.SANDBOX_UNAVAILABLE);
    expect(err.details?.status).toBe(401);
    expect(err.hint).toContain("provisioner_api_key");
    expect(err.message).toContain("invalid API key");
  });
});
