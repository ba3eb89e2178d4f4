import { definePlugin } from "@antler/kernel";
import { z } from "zod";
import { BATCH_ITEM_RUNNER } from "../service.js";
import { SleepingStubRunner } from "./stub-runner.js";

export const stubRunnerPluginConfigSchema = z.strictObject({
  sleep_ms: z.number().int().nonnegative().default(10),
  types: z.array(z.string()).default(["general-purpose"]),
  executions_file: z.string().optional(),
  fail_when_prompt_includes: z.string().optional(),
});

/**
 * Provides BATCH_ITEM_RUNNER with a SleepingStubRunner, so batch items run without a model. Load it from
 * config.yaml by path (`.../dist/testing/stub-plugin.js`) in test and benchmark workers; never in production.
 */
export default definePlugin({
  name: "antler-batch-stub-runner",
  version: "0.1.0",
  kernel: "^0.1.0",
  description: "Test double: batch items run by a stub subagent that sleeps, then answers deterministically.",
  configSchema: stubRunnerPluginConfigSchema,
  setup(ctx) {
    ctx.provide(BATCH_ITEM_RUNNER, {
      useValue: new SleepingStubRunner({
        sleepMs: ctx.config.sleep_ms,
        types: ctx.config.types,
        ...(ctx.config.executions_file ? { executionsFile: ctx.config.executions_file } : {}),
        ...(ctx.config.fail_when_prompt_includes ? { failWhenPromptIncludes: ctx.config.fail_when_prompt_includes } : {}),
      }),
    });
  },
});
