import { fileURLToPath } from "node:url";
import type { UserConfig } from "vite";

/**
 * The Vite config both pages share: Vite's own JSX transform (oxc, automatic runtime) compiles the .tsx files, so
 * no framework plugin is needed; `base: "./"` lets a page be served under any path (the tests serve it from the
 * gateway's origin under /pages/<name>/).
 */
export function pageConfig(pageDir: URL): UserConfig {
  return {
    root: fileURLToPath(pageDir),
    base: "./",
    logLevel: "warn",
    oxc: { jsx: { runtime: "automatic" } },
    build: {
      outDir: fileURLToPath(new URL("dist", pageDir)),
      emptyOutDir: true,
      target: "es2022",
      modulePreload: { polyfill: false },
      sourcemap: false,
      reportCompressedSize: false,
      // One bundle per page (React and the SDK included), loaded once: no code splitting to tune.
      chunkSizeWarningLimit: 1024,
      rolldownOptions: {
        // The SDKs' "use client" directives mean nothing in a plain browser bundle.
        onwarn(warning, warn) {
          if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
        },
      },
    },
  };
}
