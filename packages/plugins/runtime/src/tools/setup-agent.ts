import { mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { AntlerTool } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import type { ToolRuntime } from "@langchain/core/tools";
import { stringify } from "yaml";
import { z } from "zod";
import {
  AGENT_CONFIG_FILE,
  AGENT_SOUL_FILE,
  agentDir,
  commitFiles,
  isValidAgentName,
  nameListSchema,
  normalizeNameList,
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

export const SETUP_AGENT_TOOL_NAME = "setup_agent";

export const setupAgentSchema = z.object({
  soul: z
    .string()
    .min(1)
    .max(100_000)
    .describe(
      'The complete SOUL.md of the new agent, in Markdown: who it is, its purpose, tone and personality, what it must always or never do. It becomes the agent\'s standing instructions in every conversation, so write it to the agent ("You are ...").',
    ),
  description: z.string().min(1).max(1000).describe("One sentence saying what the agent is for; shown to the user in agent lists."),
  skills: nameListSchema("skill")
    .optional()
    .describe("Names of the skills this agent may use. Omit to give it the default set; an empty list gives it none."),
  model: z.string().min(1).max(200).optional().describe("The configured model name the agent runs on. Omit for the default model."),
  tool_groups: nameListSchema("tool group")
    .optional()
    .describe("Tool groups the agent may use (e.g. web, file:read, file:write, bash). Omit to give it every tool."),
  thinking: z
    .boolean()
    .optional()
    .describe("Whether the agent thinks step by step before answering, on models that support it. Omit for on."),
  agent_name: z
    .string()
    .optional()
    .describe(
      "The agent's name: lowercase letters, digits and -, at most 64 characters (e.g. research-helper). Only used when the conversation has not already named the agent.",
    ),
});

const DESCRIPTION = [
  "Save the new custom agent you have been designing with the user. Call it once, at the end of the setup conversation, after the user has agreed to the agent's purpose and personality.",
  "It creates the agent's SOUL.md (its standing instructions) and config.yaml (name, description, skills, and optionally model, tool groups and thinking). It refuses if an agent with that name already exists.",
].join("\n");

/**
 * `setup_agent` (bootstrap runs only): creates `<baseDir>/users/<user>/agents/<name>/` with SOUL.md and
 * config.yaml. The folder is created exclusively and removed again if either file cannot be committed, so a
 * failed call never leaves a half-made agent behind.
 */
export function createSetupAgentTool(options: BuiltinToolOptions): AntlerTool {
  const { baseDir } = options;
  return defineTool({
    name: SETUP_AGENT_TOOL_NAME,
    description: DESCRIPTION,
    schema: setupAgentSchema,
    async run(args, runtime: ToolRuntime) {
      const refuse = (why: string) => toolRefusal(runtime, SETUP_AGENT_TOOL_NAME, why);
      const ctx = readRunContext(runtime);
      if (ctx.is_bootstrap !== true) {
        return refuse(
          `${SETUP_AGENT_TOOL_NAME} only works in the conversation that creates a new agent, and this is not one. To change the current custom agent use update_agent.`,
        );
      }
      // The name the host put in the run context is the one the user chose; the argument is only a fallback.
      const name = ctx.agent_name ?? args.agent_name?.trim();
      if (!name) return refuse('No agent name was given. Call again with agent_name set, e.g. "research-helper".');
      if (!isValidAgentName(name)) {
        return refuse(
          `Agent name ${JSON.stringify(name)} is not valid: use 1-64 lowercase letters, digits and "-", e.g. "research-helper".`,
        );
      }

      const badModel = args.model === undefined ? null : unknownModelReason(options, args.model.trim());
      if (badModel) return refuse(badModel);

      let dir: string;
      try {
        dir = agentDir(baseDir, runUserId(ctx), name);
        await mkdir(dirname(dir), { recursive: true });
      } catch (err) {
        return refuse(`Cannot create agent ${JSON.stringify(name)}: ${describeError(err)}. This is a host problem; tell the user.`);
      }
      try {
        // Exclusive: of two racing calls, exactly one gets the folder.
        await mkdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") {
          return refuse(
            `An agent named ${JSON.stringify(name)} already exists; nothing was changed. Ask the user for another name and call again with it.`,
          );
        }
        return refuse(`Cannot create agent ${JSON.stringify(name)}: ${describeError(err)}. This is a host problem; tell the user.`);
      }

      const config: Record<string, unknown> = { name, description: args.description.trim() };
      if (args.skills !== undefined) config.skills = normalizeNameList(args.skills);
      if (args.model !== undefined) config.model = args.model.trim();
      if (args.tool_groups !== undefined) config.tool_groups = normalizeNameList(args.tool_groups);
      if (args.thinking !== undefined) config.thinking = args.thinking;
      config.created_at = new Date().toISOString();
      const soul = args.soul.endsWith("\n") ? args.soul : `${args.soul}\n`;
      try {
        await commitFiles([
          { path: join(dir, AGENT_SOUL_FILE), content: soul, previous: null },
          { path: join(dir, AGENT_CONFIG_FILE), content: stringify(config), previous: null },
        ]);
      } catch (err) {
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
        return refuse(`Saving agent ${JSON.stringify(name)} failed (${describeError(err)}); nothing was created. Tell the user.`);
      }
      return toolReply(
        runtime,
        SETUP_AGENT_TOOL_NAME,
        `Created custom agent ${JSON.stringify(name)} (${AGENT_SOUL_FILE}, ${AGENT_CONFIG_FILE}). Tell the user it is ready; the next turn with it uses this soul.`,
      );
    },
  });
}
