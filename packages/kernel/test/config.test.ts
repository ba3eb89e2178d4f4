import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { discoverConfigPath, parseConfigText, validateKernelConfig } from "../src/config/index.js";
import { AntlerError, type ConfigIssue, createKernel, REDACTED, redactSecrets } from "../src/index.js";
import { tempDir, writeFiles } from "./fixtures.js";

function issuesOf(err: unknown): ConfigIssue[] {
  expect(err).toBeInstanceOf(AntlerError);
  return (err as AntlerError).details.issues as ConfigIssue[];
}

async function bootError(configText: string) {
  return createKernel({ configText, env: {}, discover: false }).then(
    () => {
      throw new Error("expected the boot to fail");
    },
    (err: unknown) => err as AntlerError,
  );
}

describe("config.yaml validation", () => {
  it("rejects a misspelt top-level key with line, column and a suggestion", async () => {
    const err = await bootError("recursion_limit: 50\nmodles:\n  - name: a\n    provider: openai\n");
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    const [issue] = issuesOf(err);
    expect(issue).toMatchObject({ path: "modles", line: 2, column: 1, suggestion: "models" });
    expect(err.message).toContain('did you mean "models"');
  });

  it("rejects a misspelt nested key and points at it", async () => {
    const err = await bootError("logging:\n  enhance:\n    enabeld: true\n");
    const [issue] = issuesOf(err);
    expect(issue).toMatchObject({ path: "logging.enhance.enabeld", line: 3, column: 5, suggestion: "enabled" });
  });

  it("reports a wrong type with the path of the value", async () => {
    const err = await bootError("models:\n  - name: a\n    provider: openai\n    temperature: hot\n");
    const [issue] = issuesOf(err);
    expect(issue).toMatchObject({ path: "models[0].temperature", line: 4, column: 18 });
  });

  it("reports every plugin config problem under plugins[i].config with its line", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "p.mjs": `export default ({ definePlugin, z }) => definePlugin({
        name: "demo-plugin", version: "1.0.0", kernel: "^0.1.0",
        configSchema: z.object({ max_results: z.number().int().default(5), nested: z.object({ mode: z.enum(["a", "b"]) }).optional() }),
        setup() {},
      });`,
    });
    const yaml = `plugins:\n  - path: ./p.mjs\n    config:\n      max_resluts: 3\n      nested:\n        mode: c\n`;
    const err = await createKernel({ configText: yaml, cwd: dir, discover: false, env: {} }).catch((e: AntlerError) => e);
    const issues = issuesOf(err);
    expect(issues.map((i) => i.path).sort()).toEqual(["plugins[0].config.max_resluts", "plugins[0].config.nested.mode"]);
    const typo = issues.find((i) => i.path.endsWith("max_resluts"));
    expect(typo).toMatchObject({ line: 4, column: 7, suggestion: "max_results" });
  });

  it("gives a YAML syntax error with its line", () => {
    const err = (() => {
      try {
        parseConfigText("models:\n  - name: a\n   provider: x\n", { env: {} });
      } catch (e) {
        return e as AntlerError;
      }
    })();
    expect(err?.code).toBe("ANTLER_ERR_CONFIG_PARSE");
    expect(err?.message).toMatch(/config:3:\d+/);
  });

  it("rejects duplicate keys instead of silently keeping the last", () => {
    expect(() => parseConfigText("recursion_limit: 1\nrecursion_limit: 2\n", { env: {} })).toThrow(/not valid YAML/);
  });

  it("applies defaults for omitted sections", () => {
    const config = validateKernelConfig(parseConfigText("{}", { env: {} }));
    expect(config.preset).toBe("default");
    expect(config.sandbox.allow_host_bash).toBe(false);
    expect(config.logging.enhance.enabled).toBe(false);
    expect(config.storage.backend).toBe("sqlite");
  });
});

describe("config variables", () => {
  const env = { API_KEY: "sk-test", HOST: "db.internal", PORT: "6543", EMPTY: "" };

  it("substitutes $VAR, ${VAR} and ${VAR:-default} inside strings", () => {
    const doc = parseConfigText(
      [
        "models:",
        "  - name: a",
        "    provider: openai",
        "    api_key: $API_KEY",
        "    base_url: http://${HOST}:${PORT}/v1",
        "    model: ${MODEL:-gpt-4o-mini}",
        "    description: costs $$5",
      ].join("\n"),
      { env },
    );
    const model = validateKernelConfig(doc).models[0];
    expect(model).toMatchObject({
      api_key: "sk-test",
      base_url: "http://db.internal:6543/v1",
      model: "gpt-4o-mini",
      description: "costs $5",
    });
  });

  it("types a value that is one whole reference, so numbers stay numbers", () => {
    const doc = parseConfigText("recursion_limit: ${LIMIT:-250}\n", { env: {} });
    expect(validateKernelConfig(doc).recursion_limit).toBe(250);
  });

  it("keeps an all-digit or true/false variable a string where the schema wants a string, and typed where it wants a number", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "p.mjs": `export default ({ definePlugin, z }) => definePlugin({
        name: "keyed-plugin", version: "1.0.0", kernel: "^0.1.0",
        configSchema: z.object({ api_key: z.string(), flag_text: z.string(), port: z.number().int(), keys: z.array(z.string()) }),
        setup(ctx) { globalThis.__keyedConfig = ctx.config; },
      });`,
    });
    const yaml =
      "plugins:\n  - path: ./p.mjs\n    config:\n      api_key: ${KEY}\n      flag_text: $FLAG\n      port: ${PORT}\n      keys: [$KEY, x]\n";
    const kernel = await createKernel({ configText: yaml, cwd: dir, discover: false, env: { KEY: "0012345", FLAG: "true", PORT: "8080" } });
    const seen = (globalThis as { __keyedConfig?: unknown }).__keyedConfig;
    expect(seen).toEqual({ api_key: "0012345", flag_text: "true", port: 8080, keys: ["0012345", "x"] });
    await kernel.close();
    // A number that is out of range is still reported as a number problem, not turned into a string.
    const bad = await createKernel({ configText: yaml, cwd: dir, discover: false, env: { KEY: "1", FLAG: "x", PORT: "80.5" } }).catch(
      (e: AntlerError) => e,
    );
    expect(issuesOf(bad).map((i) => i.path)).toEqual(["plugins[0].config.port"]);
  });

  it("fails on a missing variable without default, naming the YAML path and line", () => {
    let err: AntlerError | undefined;
    try {
      parseConfigText("models:\n  - name: a\n    provider: openai\n    api_key: ${OPENAI_API_KEY}\n", { env });
    } catch (e) {
      err = e as AntlerError;
    }
    expect(err?.code).toBe("ANTLER_ERR_CONFIG_ENV_MISSING");
    expect(issuesOf(err)[0]).toMatchObject({ path: "models[0].api_key", line: 4 });
    expect(err?.message).toContain("OPENAI_API_KEY");
  });
});

describe("config discovery", () => {
  it("prefers the explicit path, then ANTLER_CONFIG, then ./config.yaml, else embedded defaults", () => {
    const dir = tempDir();
    writeFiles(dir, { "config.yaml": "{}", "other.yaml": "{}", "env.yaml": "{}" });
    expect(discoverConfigPath({ explicit: "other.yaml", env: { ANTLER_CONFIG: "env.yaml" }, cwd: dir })).toBe(join(dir, "other.yaml"));
    expect(discoverConfigPath({ env: { ANTLER_CONFIG: "env.yaml" }, cwd: dir })).toBe(join(dir, "env.yaml"));
    expect(discoverConfigPath({ env: {}, cwd: dir })).toBe(join(dir, "config.yaml"));
    expect(discoverConfigPath({ env: {}, cwd: tempDir() })).toBeNull();
  });

  it("fails clearly when an explicit or ANTLER_CONFIG path does not exist", () => {
    const dir = tempDir();
    expect(() => discoverConfigPath({ explicit: "nope.yaml", env: {}, cwd: dir })).toThrow(/does not exist/);
    expect(() => discoverConfigPath({ env: { ANTLER_CONFIG: "gone.yaml" }, cwd: dir })).toThrow(/ANTLER_CONFIG/);
  });
});

describe("redactSecrets", () => {
  it("scrubs secret keys, URL credentials and token shapes, and leaves the rest", () => {
    const input = {
      api_key: "sk-abcdefghijklmnopqrstuv",
      apiKey: "x",
      accessToken: "t",
      password: "hunter2",
      DATABASE_URL: "postgres://u:p@h/db",
      max_tokens: 4096,
      token_budget: { enabled: true },
      headers: { Authorization: "Bearer abcdefghijklmnop", Accept: "json" },
      notes: "connect with postgres://admin:s3cret@db:5432/app then use key sk-abcdefghijklmnopqrstuv",
      nested: [{ client_secret: "zzz", name: "ok" }],
    };
    const out = redactSecrets(input);
    expect(out.api_key).toBe(REDACTED);
    expect(out.apiKey).toBe(REDACTED);
    expect(out.accessToken).toBe(REDACTED);
    expect(out.password).toBe(REDACTED);
    expect(out.DATABASE_URL).toBe(REDACTED);
    expect(out.max_tokens).toBe(4096);
    expect(out.token_budget).toEqual({ enabled: true });
    expect(out.headers).toEqual({ Authorization: REDACTED, Accept: "json" });
    expect(out.notes).toBe(`connect with postgres://admin:${REDACTED}@db:5432/app then use key ${REDACTED}`);
    expect(out.nested).toEqual([{ client_secret: REDACTED, name: "ok" }]);
    expect(input.password).toBe("hunter2");
  });
});

describe("summarization config", () => {
  it("rejects a target_tokens at or above trigger_tokens, naming the key", async () => {
    const err = await bootError("summarization:\n  enabled: true\n  trigger_tokens: 1000\n  target_tokens: 1200\n");
    const [issue] = issuesOf(err);
    expect(issue).toMatchObject({ path: "summarization.target_tokens", line: 4 });
    expect(err.message).toContain("target_tokens must be below trigger_tokens");
  });
});

describe("storage.checkpoint.keep config", () => {
  it("defaults to the last 20 checkpoints and the last of every turn", () => {
    const config = validateKernelConfig(parseConfigText("storage:\n  backend: sqlite\n", { env: {} }));
    expect(config.storage.checkpoint).toEqual({ mode: "delta", keep: { last: 20, turns: true } });
  });

  it("takes last and turns, and a partial block keeps the other default", () => {
    const config = validateKernelConfig(parseConfigText("storage:\n  checkpoint:\n    keep:\n      last: 5\n", { env: {} }));
    expect(config.storage.checkpoint.keep).toEqual({ last: 5, turns: true });
  });

  it.each([
    ["last: 0", "storage.checkpoint.keep.last", "must be at least 1"],
    ["last: 2.5", "storage.checkpoint.keep.last", "must be a whole number of checkpoints"],
    ["last: many", "storage.checkpoint.keep.last", "must be a whole number of checkpoints"],
    ["turns: sometimes", "storage.checkpoint.keep.turns", "must be true or false"],
  ])("rejects `%s` at %s, saying what is allowed", async (line, path, message) => {
    const err = await bootError(`storage:\n  checkpoint:\n    keep:\n      ${line}\n`);
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    const [issue] = issuesOf(err);
    expect(issue).toMatchObject({ path, line: 4 });
    expect(issue?.message).toContain(message);
  });

  it("rejects a misspelt keep key with a suggestion", async () => {
    const err = await bootError("storage:\n  checkpoint:\n    keep:\n      turn: false\n");
    const [issue] = issuesOf(err);
    expect(issue).toMatchObject({ path: "storage.checkpoint.keep.turn", suggestion: "turns" });
  });
});

describe("storage.postgres.pool config", () => {
  it("defaults to 20 connections and a 30 s acquire timeout, next to the existing postgres_url and postgres_schema keys", () => {
    const config = validateKernelConfig(
      parseConfigText("storage:\n  backend: postgres\n  postgres_url: postgres://db:5432/app\n  postgres_schema: antler\n", { env: {} }),
    );
    expect(config.storage).toMatchObject({ postgres_url: "postgres://db:5432/app", postgres_schema: "antler" });
    expect(config.storage.postgres.pool).toEqual({ max: 20, acquire_timeout_ms: 30_000 });
  });

  it("takes max and acquire_timeout_ms, and a partial block keeps the other default", () => {
    const config = validateKernelConfig(parseConfigText("storage:\n  postgres:\n    pool:\n      max: 5\n", { env: {} }));
    expect(config.storage.postgres.pool).toEqual({ max: 5, acquire_timeout_ms: 30_000 });
  });

  it.each([
    ["max: 0", "storage.postgres.pool.max", "must be at least 2 connections"],
    ["max: 2.5", "storage.postgres.pool.max", "must be a whole number of connections"],
    ["max: ten", "storage.postgres.pool.max", "must be a whole number of connections"],
    ["max: 5000", "storage.postgres.pool.max", "must be at most 1000 connections"],
    ["acquire_timeout_ms: 10", "storage.postgres.pool.acquire_timeout_ms", "must be at least 100 ms"],
    ["acquire_timeout_ms: -1", "storage.postgres.pool.acquire_timeout_ms", "must be at least 100 ms"],
    ["acquire_timeout_ms: soon", "storage.postgres.pool.acquire_timeout_ms", "must be a number of milliseconds"],
  ])("rejects `%s` at %s, saying what is allowed", async (line, path, message) => {
    const err = await bootError(`storage:\n  postgres:\n    pool:\n      ${line}\n`);
    expect(err.code).toBe("ANTLER_ERR_CONFIG_INVALID");
    const [issue] = issuesOf(err);
    expect(issue).toMatchObject({ path, line: 4 });
    expect(issue?.message).toContain(message);
  });

  it("rejects a misspelt pool key with a suggestion", async () => {
    const err = await bootError("storage:\n  postgres:\n    pool:\n      acquire_timeout: 5000\n");
    const [issue] = issuesOf(err);
    expect(issue).toMatchObject({ path: "storage.postgres.pool.acquire_timeout", suggestion: "acquire_timeout_ms" });
  });
});
