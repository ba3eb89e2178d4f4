import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { createKernel } from "../src/boot.js";
import { readConfigDocument } from "../src/config/load.js";
import { tempDir, writeFiles } from "./fixtures.js";

// `antler config schema` must accept what `config check` accepts and reject what it rejects, checked with a real
// JSON Schema validator (Ajv, draft 2020-12, the draft zod emits).

const examples = resolve(dirname(fileURLToPath(import.meta.url)), "../../../examples");
const exampleConfigs = readdirSync(examples, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(join(examples, d.name))
      .filter((f) => /^config(\..+)?\.yaml$/.test(f))
      .map((f) => join(examples, d.name, f)),
  );

async function schemaFor(configPath: string, env: Record<string, string> = {}) {
  const kernel = await createKernel({ configPath, env, discover: false, logDestination: { write: () => true } as never });
  try {
    return kernel.configJsonSchema();
  } finally {
    await kernel.close();
  }
}

function validate(schema: Record<string, unknown>, data: unknown) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const ok = ajv.validate(schema, data);
  return { ok, errors: JSON.stringify(ajv.errors ?? []) };
}

const GREETER = `export default ({ definePlugin, z }) => definePlugin({
  name: "greeter", version: "1.0.0", kernel: "^0.1.0",
  configSchema: z.object({ greeting: z.string(), style: z.object({ loud: z.boolean().default(false) }).default({ loud: false }) }),
  setup() {},
});`;
const BARE = `export default ({ definePlugin }) => definePlugin({ name: "bare", version: "1.0.0", kernel: "^0.1.0", setup() {} });`;

describe("config.yaml JSON Schema", () => {
  it("finds the example configs", () => {
    expect(exampleConfigs.length).toBeGreaterThanOrEqual(3);
  });

  it.each(exampleConfigs.map((path) => ({ path, name: path.slice(examples.length + 1) })))(
    "$name validates against its own exported schema",
    async ({ path }) => {
      const env = {
        RESEARCH_ASSISTANT_DIR: dirname(path),
        OPENAI_API_KEY: "sk-test",
        ANTLER_PG_URL: "postgres://x@127.0.0.1/db",
        ANTLER_KEY_ALICE: "alice-key-0123456789abcdef",
        ANTLER_KEY_BOB: "bob-key-0123456789abcdef01",
      };
      const schema = await schemaFor(path, env);
      const { ok, errors } = validate(schema, readConfigDocument(path, env).data);
      expect(errors).toBe("[]");
      expect(ok).toBe(true);
    },
  );

  it("rejects an unknown key inside a plugin's config, at any depth, as config check does", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": GREETER,
      "bare.js": BARE,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config: { greeting: hi }\n  - path: ./bare.js\n",
    });
    const schema = await schemaFor(join(dir, "config.yaml"));
    const entry = (config: unknown) => ({ plugins: [{ path: "./greeter.js", config }] });
    expect(validate(schema, entry({ greeting: "hi" })).ok).toBe(true);
    expect(validate(schema, entry({ greeting: "hi", style: { loud: true } })).ok).toBe(true);
    expect(validate(schema, entry({ greeting: "hi", greting: "typo" })).ok).toBe(false);
    expect(validate(schema, entry({ greeting: "hi", style: { lowd: true } })).ok).toBe(false);
    expect(validate(schema, entry({ greeting: 3 })).ok).toBe(false);
    // A plugin without a schema takes no config; another plugin's entry still takes any.
    expect(validate(schema, { plugins: [{ path: "./bare.js" }] }).ok).toBe(true);
    expect(validate(schema, { plugins: [{ path: "./bare.js", config: { x: 1 } }] }).ok).toBe(false);
    expect(validate(schema, { plugins: [{ package: "@someone/else", config: { anything: true } }] }).ok).toBe(true);
    expect(validate(schema, { modles: [] }).ok).toBe(false);
  });

  it("reports a typo in one plugin's config block once, at that block, with Ajv's default options", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "greeter.js": GREETER,
      "bare.js": BARE,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./greeter.js\n    config: { greeting: hi }\n  - path: ./bare.js\n",
    });
    const schema = await schemaFor(join(dir, "config.yaml"));
    // Default options: strict (an unknown format would throw), first error per failing branch.
    const ajv = new Ajv2020();
    const check = ajv.compile(schema);
    const data = { plugins: [{ path: "./bare.js" }, { path: "./greeter.js", config: { greeting: "hi", greting: "typo" } }] };
    expect(check(data)).toBe(false);
    expect(check.errors).toEqual([
      expect.objectContaining({
        instancePath: "/plugins/1/config",
        keyword: "additionalProperties",
        params: { additionalProperty: "greting" },
      }),
    ]);
    // With allErrors, the only other error is the `if` that names the entry whose `then` failed, at the same entry.
    const all = new Ajv2020({ allErrors: true }).compile(schema);
    expect(all(data)).toBe(false);
    expect(all.errors?.map((e) => `${e.instancePath} ${e.keyword}`)).toEqual(["/plugins/1/config additionalProperties", "/plugins/1 if"]);
  });

  it("emits no format that Ajv without ajv-formats warns about, and still rejects a URL without a scheme", async () => {
    const dir = tempDir();
    const URLISH = `export default ({ definePlugin, z }) => definePlugin({
  name: "urlish", version: "1.0.0", kernel: "^0.1.0", configSchema: z.object({ endpoint: z.url() }), setup() {},
});`;
    writeFiles(dir, {
      "urlish.js": URLISH,
      "package.json": '{"type":"module"}',
      "config.yaml": "plugins:\n  - path: ./urlish.js\n    config: { endpoint: 'https://example.test' }\n",
    });
    const schema = await schemaFor(join(dir, "config.yaml"));
    const properties = schema.properties as Record<string, unknown>;
    // A default value is data: logging's `format: "json"` stays, only the `format` keyword goes.
    expect(JSON.stringify(properties.logging)).toContain('"format":"json"');
    const { logging: _, ...rest } = properties;
    expect(JSON.stringify(rest)).not.toMatch(/"format":"/);
    const warnings: unknown[] = [];
    const ajv = new Ajv2020({ logger: { log: () => {}, warn: (...args: unknown[]) => warnings.push(args), error: () => {} } });
    const check = ajv.compile(schema);
    expect(warnings).toEqual([]);
    const entry = (endpoint: string) => ({ plugins: [{ path: "./urlish.js", config: { endpoint } }] });
    expect(check(entry("https://example.test/x"))).toBe(true);
    expect(check(entry("example.test/x"))).toBe(false);
  });
});
