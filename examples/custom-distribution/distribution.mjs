// A distribution composed in code, with no config.yaml: a support-desk assistant built on Antler.
// - A static catalogue of plugin objects: nothing is discovered or imported by name at run time.
// - One default middleware replaced: Title becomes a deterministic "Ticket: ..." title (no model call).
// - One middleware of its own: e-mail addresses are masked in every model request (the thread keeps them).
// - An AntlerClient factory that products call.
import { definePlugin } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import anthropicPlugin from "@antler/plugin-anthropic";
import openaiPlugin from "@antler/plugin-openai";
import { AntlerClient } from "@antler/plugin-runtime";
import { z } from "zod";

const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/g;

/** Tools of this product. */
export const supportTools = definePlugin({
  name: "support-tools",
  version: "1.0.0",
  kernel: "^0.1.0",
  configSchema: z.object({ sla_hours: z.number().int().positive().default(24) }),
  setup(ctx) {
    ctx.tools.add(
      defineTool({
        name: "open_ticket",
        description: "Open a support ticket and return its id and response deadline.",
        schema: z.object({
          summary: z.string().min(3).describe("One line describing the problem."),
          priority: z.enum(["low", "normal", "high"]),
        }),
        run: ({ summary, priority }) => {
          const hours = priority === "high" ? Math.ceil(ctx.config.sla_hours / 4) : ctx.config.sla_hours;
          return JSON.stringify({ ticket: `T-${summary.length}${priority[0]}`, respond_within_hours: hours });
        },
      }),
    );
  },
});

/** House rules as middleware: one replacement of a default, one addition. */
export const houseStyle = definePlugin({
  name: "house-style",
  version: "1.0.0",
  kernel: "^0.1.0",
  setup(ctx) {
    // Replaces the default Title middleware in place; without `override: true` the kernel refuses.
    ctx.middleware.add(
      {
        name: "ticket-title",
        afterAgent(state) {
          if (state.title) return undefined;
          const first = state.messages.find((m) => m.getType() === "human");
          const words = String(first?.content ?? "")
            .replace(EMAIL, "")
            .split(/\s+/)
            .filter(Boolean)
            .slice(0, 5);
          return { title: `Ticket: ${words.join(" ") || "new request"}` };
        },
      },
      { replace: "Title", override: true },
    );
    // Masks addresses in what the model sees, right before Clarification (the last middleware).
    ctx.middleware.add(
      {
        name: "mask-emails",
        wrapModelCall(request, handler) {
          const messages = request.messages.map((m) =>
            typeof m.content === "string" && EMAIL.test(m.content)
              ? Object.assign(Object.create(Object.getPrototypeOf(m)), m, { content: m.content.replace(EMAIL, "[email]") })
              : m,
          );
          return handler({ ...request, messages });
        },
      },
      { before: "Clarification" },
    );
  },
});

/** Everything this distribution can run, by name. */
export const catalogue = Object.freeze({
  "@antler/plugin-openai": openaiPlugin,
  "@antler/plugin-anthropic": anthropicPlugin,
  "support-tools": supportTools,
  "house-style": houseStyle,
});

/**
 * The product's entry point. `models` and `storage` come from the deployment (code, env, a secrets store);
 * `plugins` picks catalogue entries; `extraPlugins` lets a caller (or a test) add its own plugin objects.
 */
export async function createSupportClient({
  models,
  storage = { backend: "sqlite" },
  baseDir = ".support-desk",
  plugins = Object.keys(catalogue),
  pluginConfig = {},
  extraPlugins = [],
  userId,
} = {}) {
  const chosen = plugins.map((name) => {
    const plugin = catalogue[name];
    if (!plugin) throw new Error(`unknown plugin "${name}"; the catalogue has: ${Object.keys(catalogue).join(", ")}`);
    return { plugin, config: pluginConfig[name] };
  });
  return AntlerClient.create({
    config: { base_dir: baseDir, models, storage, logging: { level: "warn" } },
    plugins: [...chosen, ...extraPlugins],
    discover: false,
    userId,
  });
}
