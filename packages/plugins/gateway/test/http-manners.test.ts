import { errorResponseSchema } from "@antler/plugin-runtime";
import { defineGatewayRoute } from "@antler/plugin-runtime/routes";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway } from "./fixtures.js";

const thingsRoute = {
  plugin: "things-plugin",
  route: defineGatewayRoute({
    method: "POST",
    path: "/things",
    body: z.object({ name: z.string(), extra: z.unknown().optional() }),
    handler: ({ body }) => ({ status: 201, body }),
  }),
};

async function errorOf(response: Response) {
  return errorResponseSchema.parse(await response.json()).error;
}

describe("a known path with the wrong method is a 405 with Allow", () => {
  it.each([
    ["GET", "/api/threads/t/runs/wait", "POST"],
    ["GET", "/api/threads/t/runs/stream", "POST"],
    ["PUT", "/api/threads/t", "DELETE, GET, HEAD, PATCH"],
    ["POST", "/api/threads/t/runs/some-run", "GET, HEAD"],
    ["DELETE", "/api/threads", "GET, HEAD, POST"],
    ["POST", "/health", "GET, HEAD"],
    ["GET", "/api/things", "POST"],
  ])("%s %s answers 405, Allow: %s", async (method, path, allow) => {
    const gw = await startTestGateway({ gateway: { routes: [thingsRoute] } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const response = await gw.call(path, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe(allow);
    expect(response.headers.get("x-trace-id")).toMatch(/^[0-9a-f]{32}$/);
    const error = await errorOf(response);
    expect(error.code).toBe("ANTLER_ERR_GATEWAY_METHOD_NOT_ALLOWED");
    expect(error.message).toBe(`${method} is not allowed on ${path}; it answers ${allow}`);
  });

  it("GET .../runs/wait no longer looks for a run called wait, and real run ids and unknown paths are unchanged", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const wait = await gw.call("/api/threads/t/runs/wait");
    expect(JSON.stringify(await wait.json())).not.toContain('run "wait"');
    const unknownRun = await gw.call("/api/threads/t/runs/no-such-run");
    expect(unknownRun.status).toBe(404);
    const nowhere = await gw.call("/api/nowhere", { method: "DELETE" });
    expect(nowhere.status).toBe(404);
    expect(nowhere.headers.get("allow")).toBeNull();
  });
});

describe("depth and size limits answer the same on every JSON route", () => {
  const deepBody = `{"extra":${'{"a":'.repeat(100)}1${"}".repeat(100)}}`;
  const routes: Array<[string, string]> = [
    ["POST", "/api/threads"],
    ["POST", "/api/threads/t/runs/stream"],
    ["POST", "/api/threads/t/runs/wait"],
    ["POST", "/api/things"],
  ];

  it.each(routes)("%s %s: 100-deep JSON is a 400 LIMIT_EXCEEDED naming max_json_depth", async (method, path) => {
    const gw = await startTestGateway({ gateway: { routes: [thingsRoute] } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const response = await gw.call(path, { method, body: deepBody, headers: { "content-type": "application/json" } });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({
      code: "ANTLER_ERR_GATEWAY_LIMIT_EXCEEDED",
      message: "the JSON body nests deeper than 64 levels (at extra.a.a.a.a.a.a.a.…)",
      details: { limit: "max_json_depth", max: 64 },
    });
  });

  it.each(routes)("%s %s: JSON over max_json_bytes is a 413 naming max_json_bytes", async (method, path) => {
    const gw = await startTestGateway({ config: { max_json_bytes: 200 }, gateway: { routes: [thingsRoute] } });
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t" } });
    const response = await gw.call(path, { method, json: { name: "x", message: "y", extra: "z".repeat(300) } });
    expect(response.status).toBe(413);
    expect(await errorOf(response)).toMatchObject({
      code: "ANTLER_ERR_GATEWAY_PAYLOAD_TOO_LARGE",
      details: { limit: "max_json_bytes", max_bytes: 200 },
    });
  });
});
