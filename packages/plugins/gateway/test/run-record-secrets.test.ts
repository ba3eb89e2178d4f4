import { redactText } from "@antler/kernel";
import { runRecordSchema } from "@antler/plugin-runtime";
import { describe, expect, it } from "vitest";
import { startTestGateway } from "./fixtures.js";

// The shapes the hardening round found stored verbatim in run records (issue 26, G8). Each value is unique, so
// finding it anywhere in the stored record means it leaked.
const PEM = [
  "-----BEGIN RSA PRIVATE KEY-----",
  "MIIEowIBAAKCAQEAz0pemBodyLine1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
  "pemBodyLine2yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",
  "-----END RSA PRIVATE KEY-----",
].join("\n");
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

describe("run records read over HTTP", () => {
  it("hold no PEM key, key=value secret in text, suffixed secret key or numeric secret that the run was sent", async () => {
    const gw = await startTestGateway();
    await gw.call("/api/threads", { method: "POST", json: { thread_id: "t-secrets" } });
    const message = `Deploy with this key:\n${PEM}\nand aws_secret_access_key=${AWS_SECRET} export DB_PASSWORD = 'quoted pass phrase'`;
    const res = await gw.call("/api/threads/t-secrets/runs/wait", {
      method: "POST",
      json: {
        message,
        context: {
          apiKeyObj: { id: "key-obj-value-1", scopes: ["all"] },
          private_key_pem: "private-key-pem-value-2",
          signing_secret_b64: "c2lnbmluZy1zZWNyZXQtdmFsdWUtMw",
          card_pin: 482913,
          otp: 771204,
          topic: "deploys",
        },
        metadata: { note: '{"api_token": 993311, "user": "ann"}', source: "cli" },
      },
    });
    expect(res.status).toBe(200);
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const run = runRecordSchema.parse(await (await gw.call(`/api/threads/t-secrets/runs/${runId}`)).json());
    const stored = JSON.stringify(run.kwargs);
    for (const secret of [
      "pemBodyLine1",
      "pemBodyLine2",
      AWS_SECRET,
      "quoted pass phrase",
      "key-obj-value-1",
      "private-key-pem-value-2",
      "c2lnbmluZy1zZWNyZXQtdmFsdWUtMw",
      "482913",
      "771204",
      "993311",
    ]) {
      expect(stored, `the run record holds ${secret}`).not.toContain(secret);
    }
    // What is not a secret stays readable.
    expect(run.kwargs.context).toMatchObject({ topic: "deploys" });
    expect(run.kwargs.metadata).toMatchObject({ source: "cli" });
    expect(stored).toContain("Deploy with this key");
    expect(stored).toContain("ann");
    // One redactor: the record's text is exactly what the kernel's redactText (used by logs and memory) makes of it.
    expect(run.kwargs.input).toBe(redactText(message, { prose: true }));
  });
});
