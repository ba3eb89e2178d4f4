import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createSupportClient } from "../distribution.mjs";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function client(steps: Parameters<typeof scriptedModelsPlugin>[0][string]) {
  const dir = mkdtempSync(join(tmpdir(), "support-desk-"));
  dirs.push(dir);
  const scripted = scriptedModelsPlugin({ desk: steps });
  const c = await createSupportClient({
    models: [{ name: "desk", provider: "scripted" }],
    storage: { backend: "memory" },
    baseDir: join(dir, "data"),
    pluginConfig: { "support-tools": { sla_hours: 8 } },
    extraPlugins: [scripted],
  });
  return { c, scripted };
}

describe("custom distribution", () => {
  it("runs a turn with its own tools, a replaced Title and its e-mail mask", async () => {
    const { c, scripted } = await client([
      { toolCalls: [{ name: "open_ticket", args: { summary: "Invoice total is wrong", priority: "high" } }] },
      { text: "I opened ticket T-22h; we will reply within 2 hours." },
    ]);
    try {
      const answer = await c.chat("My invoice total is wrong, reach me at ann@example.com", { threadId: "ticket-1" });
      expect(answer).toContain("T-22h");
      const thread = await c.getThread("ticket-1");
      expect(thread.title).toBe("Ticket: My invoice total is wrong,");
      const result = thread.messages.find((m) => m.type === "tool");
      expect(JSON.parse(result?.content ?? "{}")).toEqual({ ticket: "T-22h", respond_within_hours: 2 });
      // The model never saw the address; the thread keeps what the user wrote.
      const seen = scripted.models
        .get("desk")
        ?.calls[0]?.messages.map((m) => String(m.content))
        .join("\n");
      expect(seen).toContain("[email]");
      expect(seen).not.toContain("ann@example.com");
      expect(thread.messages[0]?.content).toContain("ann@example.com");
    } finally {
      await c.close();
    }
  });

  it("places its middleware where it says: the replacement at Title's position, the mask before Clarification", async () => {
    const { c } = await client([]);
    try {
      const order = (await c.kernel.assembleMiddleware()).map((e) => e.name);
      expect(order).not.toContain("Title");
      // Summarization, Todo and ViewImage are off by default, so Title's slot follows ToolErrorHandling.
      expect(order.indexOf("house-style/ticket-title")).toBe(order.indexOf("ToolErrorHandling") + 1);
      expect(order.indexOf("LoopDetection")).toBe(order.indexOf("house-style/ticket-title") + 1);
      expect(order.slice(-2)).toEqual(["house-style/mask-emails", "Clarification"]);
    } finally {
      await c.close();
    }
  });

  it("rejects an unknown catalogue entry and a bad plugin config at boot", async () => {
    await expect(createSupportClient({ plugins: ["nope"] })).rejects.toThrow(/unknown plugin "nope"/);
    await expect(
      createSupportClient({ plugins: ["support-tools"], pluginConfig: { "support-tools": { sla_hours: "soon" } } }),
    ).rejects.toThrow(/plugins\.support-tools\.config\.sla_hours: .*expected number/);
  });
});
