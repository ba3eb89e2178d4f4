import { join } from "node:path";

export const EXAMPLE_DIR = join(import.meta.dirname, "..");
export const CONFIG = join(EXAMPLE_DIR, "config.yaml");

/** The environment a deployment provides (placeholders; nothing here connects anywhere). */
export const DEPLOYMENT_ENV: Record<string, string> = {
  ANTLER_PG_URL: "postgres://antler:secret@db.internal:5432/antler",
  OPENAI_API_KEY: "sk-test-not-a-real-key",
  ANTLER_KEY_ALICE: "alice-0123456789abcdef0123",
  ANTLER_KEY_BOB: "bob-0123456789abcdef012345",
};

/** The packages config.yaml enables, in order. */
export const PLUGIN_PACKAGES = [
  "@antler/plugin-openai",
  "@antler/plugin-sandbox",
  "@antler/sandbox-local",
  "@antler/plugin-subagents",
  "@antler/plugin-batch",
  "@antler/plugin-scheduler",
  "@antler/plugin-gateway",
] as const;
