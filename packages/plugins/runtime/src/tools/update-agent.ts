import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { AntlerTool } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { ToolRuntime } from "@langchain/core/tools";
import { Document, isMap, parseDocument } from "yaml";
import { z } from "zod";
import {
  AGENT_CONFIG_FILE,
  AGENT_SOUL_FILE,
  agentDir,
  commitFiles,
  type FileWrite,
  isValidAgentName,
  nameListSchema,
  normalizeNameList,
  readIfExists,
} from "./agent-files.js";
import {
  type BuiltinToolOptions,
  describeError,
  readRunContext,
  runUserId,
  toolRefusal,
  toolReply,
  unknownModelReason,
} from "./tool-runtime.js";

export const UPDATE_AGENT_TOOL_NAME = "update_agent";

export const updateAgentSchema = z.object({
  soul: z
    .string()
    .min(1)
    .max(100_000)
    .optional()
    .describe(
      "The complete new SOUL.md (your standing instructions, in Markdown). It replaces the whole file, so include everything that should stay. Omit to keep it.",
    ),
  description: z.string().min(1).max(1000).optional().describe("A new one-sentence description of what you are for. Omit to keep it."),
  skills: nameListSchema("skill")
    .optional()
    .describe("The complete new list of skill names you may use (replaces the list). Omit to keep it."),
  tool_groups: nameListSchema("tool group")
    .optional()
    .describe("The complete new list of tool groups you may use (replaces the list). Omit to keep it."),
  model: z.string().min(1).max(200).optional().describe("The configured model name to run on from now on. Omit to keep it."),
  thinking: z
    .boolean()
    .optional()
    .describe("Whether you think step by step before answering (on models that support it) from now on. Omit to keep it."),
});

const CONFIG_KEYS = ["description", "skills", "tool_groups", "model", "thinking"] as const;

const DESCRIPTION = [
  'Change your own definition as a custom agent, when the user asks you to (e.g. "be more concise from now on", "also use the pdf skill").',
  "Pass only what changes: soul replaces your SOUL.md as a whole; description, skills, tool_groups, model and thinking replace those settings in your config.yaml. Everything you omit stays as it is.",
  "Changes apply from the next conversation turn.",
].join("\n");

/**
 * `update_agent` (custom agents, outside bootstrap): a partial update of the agent's SOUL.md and config.yaml.
 * config.yaml is edited as a YAML document, so keys and comments this tool does not know survive; each file is
 * replaced atomically, and a failure to replace the second restores the first.
 */
export function createUpdateAgentTool(options: BuiltinToolOptions): AntlerTool {
  const { baseDir } = options;
  return defineTool({
    name: UPDATE_AGENT_TOOL_NAME,
    description: DESCRIPTION,
    schema: updateAgentSchema,
    async run(args, runtime: ToolRuntime) {
      const refuse = (why: string) => toolRefusal(runtime, UPDATE_AGENT_TOOL_NAME, why);
      const ctx = readRunContext(runtime);
      if (ctx.is_bootstrap === true) {
        return refuse(`${UPDATE_AGENT_TOOL_NAME} cannot be used while the agent is being created; use setup_agent to save it first.`);
      }
      const name = ctx.agent_name;
      if (name === undefined) {
        return refuse(
          `${UPDATE_AGENT_TOOL_NAME} only works in a conversation with a custom agent, and this conversation has none. Nothing was changed.`,
        );
      }
      if (!isValidAgentName(name))
        return refuse(`The current agent name ${JSON.stringify(name)} is not valid; this is a host problem. Tell the user.`);

      const configChanges = CONFIG_KEYS.filter((k) => args[k] !== undefined);
      if (args.soul === undefined && configChanges.length === 0) {
        return refuse("Nothing to update: pass at least one of soul, description, skills, tool_groups, model or thinking.");
      }

      const badModel = args.model === undefined ? null : unknownModelReason(options, args.model.trim());
      if (badModel) return refuse(badModel);

      let dir: string;
      try {
        dir = agentDir(baseDir, runUserId(ctx), name);
        if (!(await stat(dir)).isDirectory()) throw new Error("not a folder");
      } catch {
        return refuse(`Agent ${JSON.stringify(name)} does not exist (its folder is missing), so it cannot be updated. Tell the user.`);
      }

      const writes: FileWrite[] = [];
      try {
        if (args.soul !== undefined) {
          const path = join(dir, AGENT_SOUL_FILE);
          writes.push({ path, content: args.soul.endsWith("\n") ? args.soul : `${args.soul}\n`, previous: await readIfExists(path) });
        }
        if (configChanges.length > 0) {
          const path = join(dir, AGENT_CONFIG_FILE);
          const previous = await readIfExists(path);
          const doc = previous === null || previous.trim() === "" ? new Document({ name }) : parseDocument(previous);
          if (doc.errors.length > 0 || !isMap(doc.contents)) {
            const why = doc.errors[0]?.message.split("\n")[0] ?? "it is not a mapping of keys to values";
            return refuse(
              `${AGENT_CONFIG_FILE} of agent ${JSON.stringify(name)} cannot be edited safely (${why}); nothing was changed. Tell the user.`,
            );
          }
          if (args.description !== undefined) doc.set("description", args.description.trim());
          if (args.skills !== undefined) doc.set("skills", normalizeNameList(args.skills));
          if (args.tool_groups !== undefined) doc.set("tool_groups", normalizeNameList(args.tool_groups));
          if (args.model !== undefined) doc.set("model", args.model.trim());
          if (args.thinking !== undefined) doc.set("thinking", args.thinking);
          doc.set("updated_at", new Date().toISOString());
          writes.push({ path, content: doc.toString(), previous });
        }
        await commitFiles(writes);
      } catch (err) {
        return refuse(`Updating agent ${JSON.stringify(name)} failed (${describeError(err)}); nothing was changed. Tell the user.`);
      }

      const changed = [...(args.soul !== undefined ? [AGENT_SOUL_FILE] : []), ...configChanges.map((k) => `${k} in ${AGENT_CONFIG_FILE}`)];
      return toolReply(
        runtime,
        UPDATE_AGENT_TOOL_NAME,
        `Updated agent ${JSON.stringify(name)}: ${changed.join(", ")}. The change applies from the next turn.`,
      );
    },
  });
}
