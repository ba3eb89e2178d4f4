import { type AntlerPlugin, createKernel, isAntlerError } from "@antler/kernel";
import { composedConfigJsonSchema, readConfigDocument } from "@antler/kernel/config";
import { describe, expect, it } from "vitest";
import { CONFIG, DEPLOYMENT_ENV, EXAMPLE_DIR, PLUGIN_PACKAGES } from "./env.js";

// The plugins are imported from source (vitest's antler:source condition), so this runs without a build. A package
// that is not in the tree yet is reported and its test skipped, never silently passed.
const loaded = new Map<string, AntlerPlugin>();
const missing: string[] = [];
for (const name of PLUGIN_PACKAGES) {
  try {
    loaded.set(name, ((await import(name)) as { default: AntlerPlugin }).default);
  } catch (error) {
    missing.push(`${name} (${(error as Error).message.split("\n")[0]})`);
  }
}

interface PluginEntry {
  package: string;
  config?: unknown;
}

/** config.yaml with `plugins:` handed over as code plugins (same validation, source instead of dist). */
async function bootExample(env: Record<string, string>) {
  const document = readConfigDocument(CONFIG, env);
  const { plugins, ...rest } = document.data as { plugins: PluginEntry[] } & Record<string, unknown>;
  expect(plugins.map((p) => p.package)).toEqual([...PLUGIN_PACKAGES]);
  return createKernel({
    config: rest,
    plugins: plugins.map((entry) => ({ plugin: loaded.get(entry.package) as AntlerPlugin, config: entry.config })),
    cwd: EXAMPLE_DIR,
    env,
    discover: false,
  });
}

describe("examples/deployment/config.yaml", () => {
  it.skipIf(missing.length > 0)(
    `validates against the kernel's and every enabled plugin's schema${missing.length ? ` (skipped: not in the tree yet: ${missing.join("; ")})` : ""}`,
    async () => {
      const kernel = await bootExample(DEPLOYMENT_ENV);
      try {
        expect(kernel.config.storage).toMatchObject({
          backend: "postgres",
          postgres_url: DEPLOYMENT_ENV.ANTLER_PG_URL,
          postgres_schema: "antler",
        });
        expect(kernel.config.subagents).toMatchObject({ enabled: true });
        expect(kernel.plugins.filter((p) => p.origin.kind === "code").map((p) => p.name)).toEqual([...PLUGIN_PACKAGES]);
        const commands = kernel.commands.map((c) => c.name);
        for (const command of ["serve", "worker", "scheduler run", "schedule add", "schedule list"]) expect(commands).toContain(command);
        const schema = JSON.stringify(composedConfigJsonSchema(kernel.plugins));
        for (const key of ["poll_interval_seconds", "api_keys", "heartbeat_seconds", "max_running"]) expect(schema).toContain(key);
      } finally {
        await kernel.close();
      }
    },
  );

  it("names the missing variable when $ANTLER_PG_URL is not set", async () => {
    const { ANTLER_PG_URL: _unset, ...env } = DEPLOYMENT_ENV;
    const error = await Promise.resolve()
      .then(() => readConfigDocument(CONFIG, env))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isAntlerError(error)).toBe(true);
    expect((error as Error).message).toMatch(/ANTLER_PG_URL/);
    expect((error as Error).message).toMatch(/storage\.postgres_url/);
  });

  it.skipIf(!loaded.has("@antler/plugin-gateway"))(
    "rejects an API key shorter than 16 characters, naming the gateway's key path",
    async () => {
      const error = await bootExample({ ...DEPLOYMENT_ENV, ANTLER_KEY_BOB: "short" }).then(
        async (kernel) => {
          await kernel.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(isAntlerError(error)).toBe(true);
      expect((error as Error).message).toMatch(/auth\.api_keys\.1\.key|auth\.api_keys\[1\]\.key/);
      expect((error as Error).message).toMatch(/at least 16 characters/);
    },
  );
});
