import { type AntlerPlugin, definePlugin } from "../plugin.js";
import { KERNEL_VERSION } from "../version.js";
import { type Script, ScriptedChatModel } from "./scripted-model.js";

/**
 * A plugin that registers model provider `scripted`: each `models:` entry with `provider: scripted` gets the
 * script given here under its name. The same model instance is returned every time, so tests can read
 * `calls` afterwards through `models.get(name)`.
 */
export function scriptedModelsPlugin(scripts: Record<string, Script>): AntlerPlugin & { models: Map<string, ScriptedChatModel> } {
  const models = new Map<string, ScriptedChatModel>();
  const plugin = definePlugin({
    name: "@antler/testing-scripted-models",
    version: KERNEL_VERSION,
    kernel: `^${KERNEL_VERSION}`,
    description: "Scripted chat models for tests and benchmarks.",
    setup(ctx) {
      ctx.models.addProvider({
        id: "scripted",
        create(config) {
          let model = models.get(config.name);
          if (!model) {
            const script = scripts[config.name];
            if (!script) throw new Error(`no script for model "${config.name}"; scripts exist for: ${Object.keys(scripts).join(", ")}`);
            model = new ScriptedChatModel(script);
            models.set(config.name, model);
          }
          return model;
        },
      });
    },
  }) as AntlerPlugin;
  return Object.freeze({ ...plugin, models });
}
