import { REDACTED } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient } from "../src/index.js";
import { tempDir } from "./fixtures.js";

// A syntactically real JWT (header {"alg":"HS256"}, payload {"sub":"1234"}); the signature part is arbitrary.
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLWJ5dGVz_x-y";

describe("run records", () => {
  const clients: AntlerClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  it("store no secret of any shape from the caller's context and metadata", async () => {
    const c = await AntlerClient.create({
      config: { models: [{ name: "m", provider: "scripted" }], storage: { backend: "sqlite" }, title: { enabled: false } },
      plugins: [scriptedModelsPlugin({ m: [{ text: "ok" }] })],
      cwd: tempDir(),
      env: {},
      discover: false,
    });
    clients.push(c);
    const result = await c.invoke(`my token is ${JWT}`, {
      threadId: "t-secrets",
      context: { api_key: [["sk-nested"]], topic: "x" },
      metadata: { Authorization: { scheme: "Bearer", value: "abc" }, note: `see ${JWT}`, token_usage: { input: 1 } },
    });
    const record = await c.getRun("t-secrets", result.run_id);
    const stored = JSON.stringify(record.kwargs);
    expect(stored).not.toContain("sk-nested");
    expect(stored).not.toContain(JWT);
    expect(stored).not.toContain('"abc"');
    expect(record.kwargs).toMatchObject({
      input: `my token is ${REDACTED}`,
      context: { api_key: REDACTED, topic: "x" },
      metadata: { Authorization: REDACTED, note: `see ${REDACTED}`, token_usage: { input: 1 } },
    });
  });
});
