import { AntlerError, definePlugin } from "@antler/kernel";
import { RuntimeErrorCodes } from "@antler/plugin-runtime";
import { defineGatewayRoute, gatewayRoutesToken, provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as legacy from "../src/routes.js";
import { collectContributedRoutes } from "../src/server.js";
import { BOB_KEY, startTestGateway } from "./fixtures.js";

/** A plugin the way the scheduler would write one: user-scoped rows behind contributed routes. */
function notesPlugin() {
  const notes = new Map<string, { id: string; user: string; text: string; trace: string }>();
  return definePlugin({
    name: "notes-plugin",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      provideGatewayRoutes(ctx, {
        routes: [
          defineGatewayRoute({
            method: "POST",
            path: "/notes",
            summary: "Add a note",
            body: z.object({ text: z.string().min(1) }),
            handler({ userId, body, traceId, principal }) {
              const id = `n${notes.size + 1}`;
              notes.set(id, { id, user: userId, text: body.text, trace: traceId });
              return { status: 201, body: { id, user: userId, kind: principal.kind, trace: traceId } };
            },
          }),
          defineGatewayRoute({
            method: "GET",
            path: "/notes/:id",
            handler({ userId, params }) {
              const note = notes.get(params.id ?? "");
              if (!note || note.user !== userId) {
                throw new AntlerError(RuntimeErrorCodes.RUN_NOT_FOUND, `note ${params.id} not found`);
              }
              return { body: note };
            },
          }),
          defineGatewayRoute({
            method: "GET",
            path: "/notes",
            query: z.object({ limit: z.coerce.number().int().min(1) }),
            handler({ userId, query }) {
              return { body: { notes: [...notes.values()].filter((n) => n.user === userId).slice(0, query.limit) } };
            },
          }),
        ],
      });
    },
  });
}

describe("routes contributed by other plugins", () => {
  it("mounts them under /api behind auth, with the user principal, trace id and validated body", async () => {
    const gw = await startTestGateway({ plugins: [notesPlugin()] });
    expect(collectContributedRoutes(gw.client.kernel).map((r) => `${r.plugin} ${r.route.method} ${r.route.path}`)).toEqual([
      "notes-plugin POST /notes",
      "notes-plugin GET /notes/:id",
      "notes-plugin GET /notes",
    ]);
    const created = await gw.call("/api/notes", { method: "POST", json: { text: "buy milk" }, headers: { "X-Trace-Id": "note-trace" } });
    expect(created.status).toBe(201);
    expect(created.headers.get("x-trace-id")).toBe("note-trace");
    expect(await created.json()).toEqual({ id: "n1", user: "alice", kind: "user", trace: "note-trace" });
    expect((await gw.call("/api/notes", { key: null, method: "POST", json: { text: "x" } })).status).toBe(401);
    const invalid = await gw.call("/api/notes", { method: "POST", json: { text: "" } });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { message: string } }).error.message).toMatch(/^text: /);
    expect((await gw.call("/api/notes?limit=zero")).status).toBe(400);
    expect(((await (await gw.call("/api/notes?limit=5")).json()) as { notes: unknown[] }).notes).toHaveLength(1);
    const index = (await (await gw.call("/api")).json()) as { routes: Array<{ method: string; path: string; plugin: string }> };
    expect(index.routes).toContainEqual({ method: "POST", path: "/api/notes", plugin: "notes-plugin", summary: "Add a note" });
    expect(index.routes).toContainEqual({ method: "POST", path: "/api/threads/:id/runs/stream", plugin: "@antler/plugin-gateway" });
    expect(index.routes.filter((r) => r.path === "/api/notes/:id")).toHaveLength(1);
  });

  it("keeps contributed rows user-scoped: another user's id is a 404", async () => {
    const gw = await startTestGateway({ plugins: [notesPlugin()] });
    await gw.call("/api/notes", { method: "POST", json: { text: "alice's" } });
    expect((await gw.call("/api/notes/n1")).status).toBe(200);
    expect((await gw.call("/api/notes/n1", { key: BOB_KEY })).status).toBe(404);
  });

  it("refuses a contributed route that would shadow a built-in one", async () => {
    const clash = definePlugin({
      name: "clash-plugin",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        provideGatewayRoutes(ctx, { routes: [defineGatewayRoute({ method: "GET", path: "/models", handler: () => ({ body: {} }) })] });
      },
    });
    await expect(startTestGateway({ plugins: [clash] })).rejects.toThrow(
      "clash-plugin contributes GET /api/models, which the gateway already serves",
    );
  });

  it("uses one token per plugin name, stable across package copies", () => {
    expect(gatewayRoutesToken("a").key).toBe(gatewayRoutesToken("a").key);
    expect(gatewayRoutesToken("a").key).not.toBe(gatewayRoutesToken("b").key);
  });

  it("still mounts a plugin written against the deprecated @antler/plugin-gateway/routes", async () => {
    expect(legacy.gatewayRoutesToken("a").key).toBe(gatewayRoutesToken("a").key);
    const legacyPlugin = definePlugin({
      name: "legacy-plugin",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        legacy.provideGatewayRoutes(ctx, {
          routes: [
            legacy.defineGatewayRoute({
              method: "GET",
              path: "/legacy/:id",
              handler: ({ params, userId }) =>
                params.id === "missing"
                  ? legacy.gatewayErrorReply(404, { code: "ANTLER_ERR_LEGACY_NOT_FOUND", message: "no such thing" })
                  : { body: { id: params.id, user: userId } },
            }),
          ],
        });
      },
    });
    const gw = await startTestGateway({ plugins: [legacyPlugin] });
    expect(await (await gw.call("/api/legacy/7")).json()).toEqual({ id: "7", user: "alice" });
    const missing = await gw.call("/api/legacy/missing");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: "ANTLER_ERR_LEGACY_NOT_FOUND", message: "no such thing" } });
  });
});

describe("background work contributed with onServe", () => {
  function workerPlugin(events: string[], fail = false) {
    return definePlugin({
      name: "worker-plugin",
      version: "1.0.0",
      kernel: "^0.1.0",
      setup(ctx) {
        provideGatewayRoutes(ctx, {
          routes: [],
          onServe: async (client) => {
            events.push(`start:${client.kernel.status}`);
            if (fail) throw new Error("queue unreachable");
            return async () => {
              events.push("stop");
            };
          },
        });
      },
    });
  }

  it("starts once the server listens and is stopped at shutdown, before the gateway finishes closing", async () => {
    const events: string[] = [];
    const gw = await startTestGateway({ plugins: [workerPlugin(events)] });
    expect(events).toEqual(["start:started"]);
    expect((await gw.call("/health")).status).toBe(200);
    await gw.close();
    expect(events).toEqual(["start:started", "stop"]);
  });

  it("a hook that throws fails the start with the plugin's name, and the port is released", async () => {
    const events: string[] = [];
    const gw = startTestGateway({ plugins: [workerPlugin(events, true)] });
    await expect(gw).rejects.toThrow(/worker-plugin failed to start its work in the gateway: queue unreachable/);
    expect(events).toEqual(["start:started"]);
  });
});
