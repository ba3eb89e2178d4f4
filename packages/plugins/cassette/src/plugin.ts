import { definePlugin, KERNEL_VERSION } from "@antler/kernel";

/**
 * Model provider `cassette`: replays recorded model exchanges so demos and tests run offline and
 * deterministically, or records them from another configured model. The cassette code loads with the first model.
 */
export default definePlugin({
  name: "@antler/plugin-cassette",
  version: "0.1.0",
  kernel: `^${KERNEL_VERSION}`,
  description: "Model provider `cassette`: replays (or records) model exchanges from a JSON Lines file.",
  setup(ctx) {
    ctx.models.addProvider({
      id: "cassette",
      description: "Replays recorded model exchanges from a JSONL cassette, or records them from another model.",
      async create(config, env) {
        const { createCassetteModel } = await import("./provider.js");
        return createCassetteModel(config, env);
      },
    });
  },
});
