import { fileURLToPath } from "node:url";
import type { UserConfig } from "vite";

/** Where `vite` (dev) and `vite preview` send the pages' API calls, so the page and the gateway share an origin. */
const GATEWAY_PATHS = ["/api", "/ai-sdk", "/langgraph"];

/**
 * The Vite config both pages share: Vite's own JSX transform (oxc, automatic runtime) compiles the .tsx files, so
 * no framework plugin is needed; `base: "./"` lets a page be served under any path (the tests serve it from the
 * gateway's origin under /pages/<name>/). The dev and preview servers proxy the gateway's paths to
 * `ANTLER_GATEWAY_URL` (default `http://127.0.0.1:8001`): same origin, so no CORS config is needed and the
 * response headers the SDKs read (`Content-Location` for useStream's run id) reach the page.
 */
export function pageConfig(pageDir: URL): UserConfig {
  const target = process.env.ANTLER_GATEWAY_URL ?? "http://127.0.0.1:8001";
  const proxy = Object.fromEntries(GATEWAY_PATHS.map((path) => [path, { target }]));
  return {
    root: fileURLToPath(pageDir),
    base: "./",
    logLevel: "warn",
    oxc: { jsx: { runtime: "automatic" } },
    server: { host: "127.0.0.1", proxy },
    preview: { host: "127.0.0.1", proxy },
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
