import { runRecordSchema } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { ALICE_KEY, rawRequest, startTestGateway } from "./fixtures.js";

const FRESH_ID = /^[0-9a-f]{32}$/;

function head(host: string, lines: string[]): string {
  return [`GET /api/models HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${ALICE_KEY}`, ...lines, "", ""].join("\r\n");
}

describe("trace ids at the HTTP edge", () => {
  it("two X-Trace-Id headers: the first valid value is taken, never the merged pair", async () => {
    const gw = await startTestGateway();
    const host = new URL(gw.url).host;
    const both = await rawRequest(gw.url, head(host, ["X-Trace-Id: first-id", "X-Trace-Id: second-id", "Connection: close"]));
    expect(both.status).toBe(200);
    expect(both.headers.get("x-trace-id")).toEqual(["first-id"]);
    const firstUnusable = await rawRequest(
      gw.url,
      head(host, [`X-Trace-Id: ${"x".repeat(513)}`, "X-Trace-Id: second-id", "Connection: close"]),
    );
    expect(firstUnusable.headers.get("x-trace-id")).toEqual(["second-id"]);
    const noneUsable = await rawRequest(gw.url, head(host, ["X-Trace-Id:    ", `X-Trace-Id: ${"y".repeat(600)}`, "Connection: close"]));
    expect(noneUsable.headers.get("x-trace-id")?.[0]).toMatch(FRESH_ID);
  });

  it("a run started with two X-Trace-Id headers is recorded under the first one", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const headers = new Headers({ authorization: `Bearer ${ALICE_KEY}`, "content-type": "application/json" });
    headers.append("X-Trace-Id", "first-id");
    headers.append("X-Trace-Id", "second-id");
    const response = await fetch(`${gw.url}/api/threads/t/runs/wait`, { method: "POST", headers, body: JSON.stringify({ message: "hi" }) });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-trace-id")).toBe("first-id");
    const { run_id, trace_id } = (await response.json()) as { run_id: string; trace_id: string };
    expect(trace_id).toBe("first-id");
    const run = runRecordSchema.parse(await (await gw.call(`/api/threads/t/runs/${run_id}`)).json());
    expect(run.trace_id).toBe("first-id");
  });

  it.each([
    { name: "a NUL in a header value", bytes: (h: string) => head(h, ["X-Note: a\0b"]), status: 400 },
    { name: "a bare CR inside a header line", bytes: (h: string) => head(h, ["X-Note: a\rb"]), status: 400 },
    { name: "a bare LF line ending", bytes: (h: string) => `GET /api/models HTTP/1.1\nHost: ${h}\n\n`, status: 400 },
    { name: "an obs-fold continuation line", bytes: (h: string) => head(h, ["X-Note: a", " folded"]), status: 400 },
    { name: "headers over the size limit", bytes: (h: string) => head(h, [`X-Big: ${"b".repeat(20_000)}`]), status: 431 },
    { name: "a request line that is not HTTP", bytes: () => "HELLO\r\n\r\n", status: 400 },
    { name: "an absolute-form target with a bad port", bytes: () => "GET http://x:99999/ HTTP/1.1\r\nHost: x\r\n\r\n", status: 400 },
    { name: "a Host header that is no host", bytes: () => "GET /health HTTP/1.1\r\nHost: a b\r\n\r\n", status: 400 },
  ])("$name gets a $status with a fresh X-Trace-Id and a closed connection", async ({ bytes, status }) => {
    const gw = await startTestGateway();
    const answer = await rawRequest(gw.url, bytes(new URL(gw.url).host));
    expect(answer.status).toBe(status);
    expect(answer.headers.get("x-trace-id")?.[0]).toMatch(FRESH_ID);
    expect(answer.headers.get("connection")).toEqual(["close"]);
    expect(answer.closed).toBe(true);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "ANTLER_ERR_GATEWAY_MALFORMED_REQUEST" } });
    // The server keeps serving.
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  });
});
