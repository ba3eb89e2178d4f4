import { describe, expect, it } from "vitest";
import { isAntlerError } from "../errors.js";
import { validateManifest } from "../loader.js";
import type { AntlerPlugin } from "../plugin.js";
import { createTestKernel } from "./kernel.js";

export interface PluginConformanceOptions {
  /** A config the plugin must accept. */
  validConfig?: unknown;
  /** Configs the plugin must reject at boot, e.g. a wrong type. An unknown key is always tried. */
  invalidConfigs?: unknown[];
  /** Plugins this one depends on, loaded alongside it. */
  dependencies?: AntlerPlugin[];
  /** Environment for the kernel (plugins read `$VAR`s only through config, but some read env directly). */
  env?: Record<string, string>;
}

/**
 * The shared suite every plugin passes: a valid manifest for this kernel, a synchronous setup that can run
 * in two kernels side by side (no module-level state), config validation that rejects unknown keys, tools
 * that a model provider will accept, and a clean start/close cycle.
 */
export function runPluginConformance(plugin: AntlerPlugin, options: PluginConformanceOptions = {}): void {
  const deps = options.dependencies ?? [];
  const withConfig = (config: unknown) => [...deps, { plugin, config }];

  describe(`plugin conformance: ${plugin.name}`, () => {
    it("has a valid manifest that fits this kernel", () => {
      expect(() => validateManifest(plugin, "conformance")).not.toThrow();
    });

    it("boots, starts and closes cleanly with a valid config", async () => {
      const kernel = await createTestKernel({ plugins: withConfig(options.validConfig), env: options.env });
      expect(kernel.plugins.map((p) => p.name)).toContain(plugin.name);
      await kernel.close();
      expect(kernel.status).toBe("closed");
    });

    it("sets up in two kernels at once without sharing state", async () => {
      const a = await createTestKernel({ plugins: withConfig(options.validConfig), env: options.env, start: false });
      const b = await createTestKernel({ plugins: withConfig(options.validConfig), env: options.env, start: false });
      const namesA = (await a.getAvailableTools()).map((t) => t.name);
      const namesB = (await b.getAvailableTools()).map((t) => t.name);
      expect(namesB).toEqual(namesA);
      await Promise.all([a.close(), b.close()]);
    });

    it("contributes tools with valid names, descriptions and argument schemas", async () => {
      const kernel = await createTestKernel({ plugins: withConfig(options.validConfig), env: options.env, start: false });
      const entries = await kernel.assembleTools({ subagentEnabled: true, includeMcp: false });
      for (const entry of entries.filter((e) => e.plugin === plugin.name)) {
        expect(entry.tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
        expect(entry.tool.description.trim().length).toBeGreaterThan(0);
        expect(entry.tool.schema).toBeDefined();
      }
      await kernel.close();
    });

    if (plugin.configSchema) {
      it("rejects an unknown config key with its path", async () => {
        const bad = { ...((options.validConfig as object | undefined) ?? {}), __not_a_real_key__: true };
        const err = await createTestKernel({ plugins: withConfig(bad), env: options.env, start: false }).catch((e: unknown) => e);
        expect(isAntlerError(err, "ANTLER_ERR_CONFIG_INVALID")).toBe(true);
        expect(String((err as Error).message)).toContain("__not_a_real_key__");
      });
      for (const [i, invalid] of (options.invalidConfigs ?? []).entries()) {
        it(`rejects invalid config #${i + 1}`, async () => {
          const err = await createTestKernel({ plugins: withConfig(invalid), env: options.env, start: false }).catch((e: unknown) => e);
          expect(isAntlerError(err, "ANTLER_ERR_CONFIG_INVALID")).toBe(true);
        });
      }
    }
  });
}
