import { describe, expect, it } from "vitest";
import { AntlerError, type ConfigIssue, createKernel, ErrorCodes } from "../src/index.js";

async function bootError(configText: string): Promise<AntlerError> {
  const err = await createKernel({ configText, env: {}, discover: false, builtins: false }).then(
    () => new Error("expected the boot to fail"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AntlerError);
  return err as AntlerError;
}

const issues = (err: AntlerError) => err.details.issues as ConfigIssue[];

describe("models: fallbacks, limits and pricing config", () => {
  it("rejects a fallback that names no configured model, at its line, pointing at `antler config check`", async () => {
    const err = await bootError("models:\n  - name: a\n    provider: openai\n    fallbacks: [b]\n");
    expect(err.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(issues(err)[0]).toMatchObject({ path: "models[0].fallbacks[0]", line: 4 });
    expect(issues(err)[0]?.message).toContain('fallback "b" is not a configured model (a)');
    expect(err.hint).toContain("antler config check");
  });

  it("rejects a cycle of fallbacks, naming the models in it", async () => {
    const err = await bootError(
      "models:\n  - { name: a, provider: openai, fallbacks: [b] }\n  - { name: b, provider: openai, fallbacks: [c] }\n  - { name: c, provider: openai, fallbacks: [a] }\n",
    );
    expect(issues(err)).toHaveLength(1);
    expect(issues(err)[0]).toMatchObject({ path: "models[2].fallbacks[0]" });
    expect(issues(err)[0]?.message).toContain("fallbacks form a cycle: a -> b -> c -> a");
  });

  it("rejects a model that falls back to itself", async () => {
    const err = await bootError("models:\n  - { name: a, provider: openai, fallbacks: [a] }\n");
    expect(issues(err)[0]?.message).toContain("cannot fall back to itself");
  });

  it("accepts shared fallbacks that are no cycle (a -> c, b -> c, a -> b)", async () => {
    const kernel = await createKernel({
      config: {
        models: [
          { name: "a", provider: "openai", fallbacks: ["b", "c"] },
          { name: "b", provider: "openai", fallbacks: ["c"] },
          { name: "c", provider: "openai" },
        ],
      },
      env: {},
      discover: false,
      builtins: false,
    });
    expect(kernel.modelConfig("a").fallbacks).toEqual(["b", "c"]);
    await kernel.close();
  });

  it("rejects a negative price and an unknown pricing key", async () => {
    const err = await bootError("models:\n  - name: a\n    provider: openai\n    pricing: { input: -1, output: 2, cahced_input: 1 }\n");
    const found = issues(err).map((i) => [i.path, i.message]);
    expect(found).toContainEqual(["models[0].pricing.input", expect.stringContaining("a price cannot be negative")]);
    expect(found.map(([path]) => path)).toContain("models[0].pricing.cahced_input");
  });

  it("rejects limits that are not positive", async () => {
    const err = await bootError("models:\n  - { name: a, provider: openai, max_concurrency: 0, requests_per_minute: -5 }\n");
    expect(
      issues(err)
        .map((i) => i.path)
        .sort(),
    ).toEqual(["models[0].max_concurrency", "models[0].requests_per_minute"]);
  });

  it("without a plugin that plans model calls, creating a model with fallbacks is a coded error naming the entry", async () => {
    const kernel = await createKernel({
      config: { preset: "none", models: [{ name: "a", provider: "scripted", pricing: { input: 1, output: 1 } }] },
      plugins: [(await import("../src/testing/index.js")).scriptedModelsPlugin({ a: [{ text: "x" }] })],
      env: {},
      discover: false,
    });
    const err = await kernel.createModel("a").catch((e: unknown) => e);
    expect((err as AntlerError).code).toBe(ErrorCodes.CONFIG_INVALID);
    expect((err as AntlerError).where).toBe("models[0]");
    expect((err as AntlerError).hint).toContain("@antler/plugin-runtime");
    await kernel.close();
  });
});
