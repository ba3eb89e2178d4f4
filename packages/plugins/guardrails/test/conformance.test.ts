import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger } from "@antler/kernel";
import { allowlistConfigSchema, allowlistProviderFactory, httpProviderConfigSchema, httpProviderFactory } from "../src/index.js";
import { runGuardrailProviderConformance } from "../src/testing/index.js";

const context = { logger: silentLogger(), where: "guardrails.providers[0].config" };

runGuardrailProviderConformance({
  name: "allowlist",
  subject: () => ({
    provider: allowlistProviderFactory.create(allowlistConfigSchema.parse({ denied_tools: ["bash"] }), context),
    allowed: { tool_name: "web_search" },
    denied: { tool_name: "bash" },
  }),
});

runGuardrailProviderConformance({
  name: "http",
  async subject() {
    // A loopback policy service that denies bash; a second one that never answers is the failing copy.
    const policy = createServer((req, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      req.on("end", () => {
        const body = JSON.parse(text) as { tool_name: string };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify(
            body.tool_name === "bash"
              ? { allow: false, reasons: [{ code: "no_shell", message: "shells are off." }], policy_id: "p1" }
              : { allow: true, reasons: [] },
          ),
        );
      });
    });
    const silent = createServer(() => {});
    await Promise.all([policy, silent].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
    const url = (s: typeof policy) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/decide`;
    return {
      provider: httpProviderFactory.create(httpProviderConfigSchema.parse({ url: url(policy) }), context),
      failing: httpProviderFactory.create(httpProviderConfigSchema.parse({ url: url(silent), timeout_ms: 100 }), context),
      allowed: { tool_name: "web_search" },
      denied: { tool_name: "bash" },
      async close() {
        for (const s of [policy, silent]) {
          s.closeAllConnections();
          await new Promise<void>((resolve) => s.close(() => resolve()));
        }
      },
    };
  },
});
