import { AntlerError, definePlugin } from "@antler/kernel";
import { scriptedModelsPlugin } from "@antler/kernel/testing";
import { afterEach, describe, expect, it } from "vitest";
import { AntlerClient } from "../src/client/client.js";
import { RuntimeErrorCodes } from "../src/errors.js";
import { provideRunAdmission, type RunAdmissionRequest } from "../src/index.js";
import { tempDir } from "./fixtures.js";

const clients: AntlerClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** An admission check as a policy plugin would write it: role `user` may run on `small` only; `broken` always fails. */
function admissionPlugin(asked: RunAdmissionRequest[]) {
  return definePlugin({
    name: "test-admission",
    version: "1.0.0",
    kernel: "^0.1.0",
    setup(ctx) {
      provideRunAdmission(ctx, (run) => {
        asked.push(run);
        if (run.userRole === "broken") throw new AntlerError("ANTLER_ERR_TEST_POLICY_DOWN", "the policy store is down");
        if (run.userRole === "user" && run.modelName !== "small") {
          throw new AntlerError(RuntimeErrorCodes.MODEL_FORBIDDEN, `role user may not use model ${run.modelName}`);
        }
      });
    },
  });
}

async function client(plugins: ReturnType<typeof definePlugin>[]) {
  const c = await AntlerClient.create({
    config: {
      models: [
        { name: "small", provider: "scripted" },
        { name: "big", provider: "scripted" },
      ],
      storage: { backend: "memory" },
      title: { enabled: false },
    },
    plugins: [scriptedModelsPlugin({ small: [{ text: "ok" }], big: [{ text: "ok" }] }), ...plugins],
    cwd: tempDir(),
    env: {},
    discover: false,
  });
  clients.push(c);
  return c;
}

const names = (models: Array<{ name: string }>) => models.map((m) => m.name);

describe("AntlerClient.listModels and run admission", () => {
  it("lists every configured model when no plugin checks admission", async () => {
    const c = await client([]);
    expect(names(await c.listModels({ userRole: "user" }))).toEqual(["small", "big"]);
  });

  it("leaves out the models an admission check refuses for the caller's role, the same checks a run passes", async () => {
    const asked: RunAdmissionRequest[] = [];
    const c = await client([admissionPlugin(asked)]);
    expect(names(await c.listModels({ userId: "alice", userRole: "user" }))).toEqual(["small"]);
    expect(names(await c.listModels({ userId: "alice", principal: { kind: "user", userId: "alice", role: "admin" } }))).toEqual([
      "small",
      "big",
    ]);
    expect(asked[0]).toMatchObject({ userId: "alice", userRole: "user", modelName: "small", internal: false });
    await expect(c.chat("hi", { userRole: "user", model: "big" })).rejects.toMatchObject({ code: RuntimeErrorCodes.MODEL_FORBIDDEN });
  });

  it("throws a refusal that is not about the model instead of hiding every model", async () => {
    const c = await client([admissionPlugin([])]);
    await expect(c.listModels({ userRole: "broken" })).rejects.toMatchObject({ code: "ANTLER_ERR_TEST_POLICY_DOWN" });
  });
});
