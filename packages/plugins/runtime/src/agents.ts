import { createHash } from "node:crypto";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { AntlerError, assertSafeId, type Kernel } from "@antler/kernel";
import { invalidConfig, parseConfigText, validateSection } from "@antler/kernel/config";
import { stringify } from "yaml";
import { z } from "zod";
import { RuntimeErrorCodes } from "./errors.js";
import { AGENT_CONFIG_FILE, AGENT_SOUL_FILE, agentDir, commitFiles, isValidAgentName, readIfExists } from "./tools/agent-files.js";

/** `config.yaml` of a custom agent; strict, so a typo is a located error with a suggestion. */
export const agentConfigSchema = z
  .object({
    /** Must match the folder name when given. */
    name: z.string().optional(),
    description: z.string().max(1000).default(""),
    /** A `models:` name; used unless the request names a model. */
    model: z.string().min(1).optional(),
    /** Only tools in these groups (plus tools without a group, the framework tools) are offered. */
    tool_groups: z.array(z.string().min(1).max(128)).max(256).optional(),
    /** The skills this agent may use; omitted: every enabled skill. */
    skills: z.array(z.string().min(1).max(128)).max(256).optional(),
    /** Thinking for runs with this agent unless the request says; omitted: on. Off anyway on a model without supports_thinking. */
    thinking: z.boolean().optional(),
    created_at: z.string().optional(),
    updated_at: z.string().optional(),
  })
  .strict();

export type AgentConfig = z.output<typeof agentConfigSchema>;

export interface CustomAgent {
  readonly name: string;
  readonly description: string;
  readonly model: string | undefined;
  readonly toolGroups: readonly string[] | undefined;
  readonly skills: readonly string[] | undefined;
  /** The agent's thinking default; `undefined`: on. */
  readonly thinking: boolean | undefined;
  /** SOUL.md: the agent's standing instructions. */
  readonly soul: string;
  /** `user`: made by or for this user; `shared`: ships with the distribution (`agents/` next to config.yaml). */
  readonly scope: "user" | "shared";
  readonly dir: string;
  /** Changes whenever SOUL.md or config.yaml changes; cached agents are keyed on it. */
  readonly version: string;
}

/** What lists, the CLI and `GET /api/agents` show (no file paths). */
export interface AgentSummary {
  name: string;
  description: string;
  model: string | null;
  tool_groups: string[] | null;
  skills: string[] | null;
  /** The agent's thinking default; null: on (the request may still say otherwise). */
  thinking: boolean | null;
  scope: "user" | "shared";
}

export interface AgentDetails extends AgentSummary {
  soul: string;
}

export function agentNotFound(name: string): AntlerError {
  return new AntlerError(RuntimeErrorCodes.AGENT_NOT_FOUND, `custom agent ${JSON.stringify(name)} not found`, {
    hint: "List the agents you can use with `antler agents list` (or GET /api/agents). Agents are per user.",
    details: { agent_name: name },
  });
}

export function assertAgentName(name: unknown): string {
  if (typeof name !== "string" || !isValidAgentName(name)) {
    throw new AntlerError(RuntimeErrorCodes.AGENT_INVALID, `agent name ${JSON.stringify(name)} is not valid`, {
      hint: 'Use 1-64 lowercase letters, digits and "-", e.g. "research-helper" (no slashes, dots or spaces).',
      details: { agent_name: typeof name === "string" ? name : String(name) },
    });
  }
  return name;
}

function sharedAgentsDir(kernel: Kernel): string {
  return join(resolve(kernel.paths.configDir), "agents");
}

function parseAgentConfig(text: string, file: string, name: string): AgentConfig {
  const document = parseConfigText(text, { file, substitute: false });
  const result = validateSection(agentConfigSchema, document.data, document, []);
  if (!result.ok) throw invalidConfig(result.issues, file);
  if (result.value.name !== undefined && result.value.name !== name) {
    throw new AntlerError(
      RuntimeErrorCodes.AGENT_INVALID,
      `${file}: name "${result.value.name}" does not match the folder name "${name}"`,
      {
        where: file,
        hint: `Set name: ${name} or remove the key (the folder name is the agent's name).`,
      },
    );
  }
  return result.value;
}

function checkModel(kernel: Kernel, config: AgentConfig, file: string): void {
  if (config.model === undefined || kernel.listModels().some((m) => m.name === config.model)) return;
  const known = kernel.listModels().map((m) => m.name);
  throw new AntlerError(RuntimeErrorCodes.AGENT_INVALID, `${file}: model "${config.model}" is not configured`, {
    where: `${file}: model`,
    hint: `Use one of the models in config.yaml (${known.join(", ") || "none configured"}) or remove the key.`,
  });
}

async function readAgentAt(kernel: Kernel, dir: string, name: string, scope: CustomAgent["scope"]): Promise<CustomAgent | null> {
  const [soul, configText] = await Promise.all([readIfExists(join(dir, AGENT_SOUL_FILE)), readIfExists(join(dir, AGENT_CONFIG_FILE))]);
  if (soul === null && configText === null) return null;
  const file = join(dir, AGENT_CONFIG_FILE);
  const config = configText === null ? agentConfigSchema.parse({}) : parseAgentConfig(configText, file, name);
  checkModel(kernel, config, file);
  return {
    name,
    description: config.description,
    model: config.model,
    toolGroups: config.tool_groups,
    skills: config.skills,
    thinking: config.thinking,
    soul: soul ?? "",
    scope,
    dir,
    version: createHash("sha256")
      .update(soul ?? "")
      .update("\0")
      .update(configText ?? "")
      .digest("hex")
      .slice(0, 16),
  };
}

/**
 * The user's custom agent `name`: their own (`<base_dir>/users/<user>/agents/<name>`) or, failing that, one that
 * ships with the distribution (`agents/<name>` next to config.yaml). `null` if neither exists; a config.yaml that
 * does not validate is an error with its line.
 */
export async function loadCustomAgent(kernel: Kernel, options: { userId: string; name: string }): Promise<CustomAgent | null> {
  const name = assertAgentName(options.name);
  return (
    (await readAgentAt(kernel, agentDir(kernel.paths.baseDir, options.userId, name), name, "user")) ??
    (await readAgentAt(kernel, join(sharedAgentsDir(kernel), name), name, "shared"))
  );
}

/** Like `loadCustomAgent`, but a missing agent is AGENT_NOT_FOUND. */
export async function requireCustomAgent(kernel: Kernel, options: { userId: string; name: string }): Promise<CustomAgent> {
  const agent = await loadCustomAgent(kernel, options);
  if (!agent) throw agentNotFound(options.name);
  return agent;
}

async function folderNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory() && isValidAgentName(e.name)).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

export function summarizeAgent(agent: CustomAgent): AgentSummary {
  return {
    name: agent.name,
    description: agent.description,
    model: agent.model ?? null,
    tool_groups: agent.toolGroups ? [...agent.toolGroups] : null,
    skills: agent.skills ? [...agent.skills] : null,
    thinking: agent.thinking ?? null,
    scope: agent.scope,
  };
}

/**
 * Every agent the user can select, their own first; a user's agent hides a shared one of the same name. An agent
 * whose files do not validate is reported through `onInvalid` and left out, so one broken agent never hides the rest.
 */
export async function listCustomAgents(
  kernel: Kernel,
  options: { userId: string; onInvalid?: (name: string, error: unknown) => void },
): Promise<AgentSummary[]> {
  const userId = assertSafeId("user", options.userId);
  const own = await folderNames(join(resolve(kernel.paths.baseDir), "users", userId, "agents"));
  const shared = (await folderNames(sharedAgentsDir(kernel))).filter((n) => !own.includes(n));
  const out: AgentSummary[] = [];
  for (const name of [...own.sort(), ...shared.sort()]) {
    try {
      const agent = await loadCustomAgent(kernel, { userId, name });
      if (agent) out.push(summarizeAgent(agent));
    } catch (err) {
      options.onInvalid?.(name, err);
    }
  }
  return out;
}

export const agentSaveRequestSchema = z
  .object({
    soul: z.string().min(1).max(100_000),
    description: z.string().max(1000).optional(),
    model: z.string().min(1).optional(),
    tool_groups: z.array(z.string().min(1).max(128)).max(256).optional(),
    skills: z.array(z.string().min(1).max(128)).max(256).optional(),
    thinking: z.boolean().optional(),
  })
  .strict();

export type AgentSaveRequest = z.input<typeof agentSaveRequestSchema>;

/**
 * Creates or replaces the user's agent `name` (both files, atomically). A shared agent of the same name is
 * shadowed, never changed. The model name is checked against `models:`.
 */
export async function saveCustomAgent(
  kernel: Kernel,
  options: { userId: string; name: string; agent: AgentSaveRequest },
): Promise<AgentDetails> {
  const name = assertAgentName(options.name);
  const parsed = agentSaveRequestSchema.safeParse(options.agent);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AntlerError(
      RuntimeErrorCodes.AGENT_INVALID,
      `agent ${JSON.stringify(name)}: ${issue?.path.join(".") || "body"}: ${issue?.message}`,
      {
        hint: "Send { soul, description?, model?, tool_groups?, skills?, thinking? }; soul is required.",
      },
    );
  }
  const body = parsed.data;
  const dir = agentDir(kernel.paths.baseDir, options.userId, name);
  const config: AgentConfig = {
    name,
    description: body.description ?? "",
    model: body.model,
    tool_groups: body.tool_groups,
    skills: body.skills,
    thinking: body.thinking,
  };
  checkModel(kernel, config, `agent ${name}`);
  await mkdir(dir, { recursive: true });
  const soulPath = join(dir, AGENT_SOUL_FILE);
  const configPath = join(dir, AGENT_CONFIG_FILE);
  const now = new Date().toISOString();
  const previousConfig = await readIfExists(configPath);
  const document: Record<string, unknown> = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
  document[previousConfig === null ? "created_at" : "updated_at"] = now;
  await commitFiles([
    { path: soulPath, content: body.soul.endsWith("\n") ? body.soul : `${body.soul}\n`, previous: await readIfExists(soulPath) },
    { path: configPath, content: stringify(document), previous: previousConfig },
  ]);
  return describeCustomAgent(await requireCustomAgent(kernel, { userId: options.userId, name }));
}

export function describeCustomAgent(agent: CustomAgent): AgentDetails {
  return { ...summarizeAgent(agent), soul: agent.soul };
}

/** Deletes the user's own agent. A shared agent cannot be deleted through a user (AGENT_CONFLICT). */
export async function deleteCustomAgent(
  kernel: Kernel,
  options: { userId: string; name: string },
): Promise<{ name: string; deleted: true }> {
  const agent = await requireCustomAgent(kernel, options);
  if (agent.scope === "shared") {
    throw new AntlerError(
      RuntimeErrorCodes.AGENT_CONFLICT,
      `agent ${JSON.stringify(agent.name)} ships with the distribution and cannot be deleted`,
      {
        hint: `Remove the folder agents/${agent.name} next to config.yaml instead, or create your own agent with another name.`,
      },
    );
  }
  // Renamed aside first, so a concurrent reader sees the agent or nothing, never half of it.
  const trash = `${agent.dir}.deleting-${process.pid}-${Date.now()}`;
  await rename(agent.dir, trash);
  await rm(trash, { recursive: true, force: true });
  return { name: agent.name, deleted: true };
}

/** The agent's section of the system prompt: its soul, after the distribution's base prompt. */
export function soulSection(agent: CustomAgent): string {
  const description = agent.description ? `\nDescription: ${agent.description}` : "";
  return `<soul agent="${agent.name}">${description}\n${agent.soul.trim()}\n</soul>`;
}
