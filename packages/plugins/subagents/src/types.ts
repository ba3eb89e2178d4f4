import type { KernelConfig } from "@antler/kernel";
import type { SubagentsPluginConfig, SubagentsSection } from "./config.js";

/** One subagent type, resolved from the built-ins and config. */
export interface SubagentType {
  readonly name: string;
  readonly description: string;
  readonly systemPrompt: string;
  /** Allow list; undefined means every tool the lead could have (minus `disallowedTools`). */
  readonly tools: readonly string[] | undefined;
  readonly disallowedTools: readonly string[];
  /** A `models:` name, or `inherit` (the parent's model). */
  readonly model: string;
  readonly maxTurns: number;
  readonly timeoutSeconds: number;
  readonly builtin: boolean;
}

/** Tools a subagent never gets: no recursion, nobody to ask, no delegating to batches, no presenting to the user. */
export const ALWAYS_DENIED: readonly string[] = [
  "task",
  "batch_task",
  "batch_status",
  "cancel_batch",
  "ask_clarification",
  "present_files",
];

const RECEIPT_RULES = `<reporting>
Every tool result you receive starts with a receipt label like [r3 bash]. Your final answer is a self-report the lead
will check: cite the receipt of every action you claim ("wrote /mnt/user-data/workspace/x.ts [r2 write_file]",
"tests pass [r4 bash]"), give verifiable handles (paths, commands), and say plainly what you did not do or could
not verify. Never claim an action without its receipt.
</reporting>`;

const GENERAL_PURPOSE_PROMPT = `You are a subagent: a capable worker the lead agent delegated one task to. Work autonomously with your
tools until the task is done; nobody can answer questions. Files live under /mnt/user-data (workspace, uploads, outputs).
Finish with a concise report of what you did and the results.`;

const BASH_PROMPT = `You are a command-line specialist subagent. Do the task with bash and the file tools, step by step, checking
each command's output and exit code before the next. Nobody can answer questions. Finish with a concise report of what
you ran and what came out.`;

export interface TypeRegistryInput {
  kernelConfig: Readonly<KernelConfig>;
  pluginConfig: SubagentsPluginConfig;
  receiptsEnabled: boolean;
}

/**
 * Built-ins first (`general-purpose`, and `bash` when bash may run), then `subagents.custom_agents` from config;
 * a custom type with a built-in's name replaces it. `bashAllowed` is asked on every lookup: the sandbox provider
 * decides isolation, and it is only known once plugins are loaded.
 */
export class SubagentTypeRegistry {
  private readonly builtins: SubagentType[];
  private readonly custom: SubagentType[];

  constructor(
    input: TypeRegistryInput,
    private readonly bashAllowed: () => boolean,
  ) {
    const section = input.kernelConfig.subagents as SubagentsSection;
    const overrides = input.pluginConfig.agents;
    const suffix = input.receiptsEnabled ? `\n\n${RECEIPT_RULES}` : "";
    const builtin = (name: string, description: string, prompt: string, tools: string[] | undefined, maxTurns: number): SubagentType => ({
      name,
      description,
      systemPrompt: prompt + suffix,
      tools,
      disallowedTools: ALWAYS_DENIED,
      model: overrides[name]?.model ?? "inherit",
      maxTurns: overrides[name]?.max_turns ?? maxTurns,
      timeoutSeconds: overrides[name]?.timeout_seconds ?? section.timeout_seconds,
      builtin: true,
    });
    this.builtins = [
      builtin(
        "general-purpose",
        "A general worker for multi-step tasks that need several tools (research, code, files). Has every tool except task.",
        GENERAL_PURPOSE_PROMPT,
        undefined,
        150,
      ),
      builtin(
        "bash",
        "A command-line specialist: runs and checks shell commands (builds, tests, git, data wrangling).",
        BASH_PROMPT,
        ["bash", "ls", "glob", "grep", "read_file", "write_file", "str_replace"],
        60,
      ),
    ];
    this.custom = Object.entries(section.custom_agents).map(([name, c]) => ({
      name,
      description: c.description,
      systemPrompt: c.system_prompt + suffix,
      tools: c.tools,
      disallowedTools: [...new Set([...ALWAYS_DENIED, ...(c.disallowed_tools ?? [])])],
      model: c.model,
      maxTurns: c.max_turns ?? 50,
      timeoutSeconds: c.timeout_seconds ?? section.timeout_seconds,
      builtin: false,
    }));
  }

  /** The types usable now, in registry order. */
  list(): SubagentType[] {
    const custom = new Set(this.custom.map((t) => t.name));
    const builtins = this.builtins.filter((t) => !custom.has(t.name) && (t.name !== "bash" || this.bashAllowed()));
    return [...builtins, ...this.custom];
  }

  names(): string[] {
    return this.list().map((t) => t.name);
  }

  get(name: string): SubagentType | undefined {
    return this.list().find((t) => t.name === name);
  }
}

/** The `antler subagents list` table. */
export function formatTypes(
  types: readonly SubagentType[],
  info: { enabled: boolean; receiptsEnabled: boolean; config: SubagentsPluginConfig },
): string {
  const lines = [
    `task tool: ${info.enabled ? "on" : "off (set subagents.enabled: true)"}; receipts: ${info.receiptsEnabled ? "on" : "off"}; ` +
      `runtime: ${info.config.runtime.max_running} running, ${info.config.runtime.max_queued} queued`,
    "",
  ];
  for (const t of types) {
    const tools = t.tools ? t.tools.join(", ") : "all";
    const denied = t.disallowedTools.join(", ");
    lines.push(`${t.name}${t.builtin ? " (built-in)" : ""}: ${t.description}`);
    lines.push(`  model ${t.model}, max ${t.maxTurns} turns, timeout ${t.timeoutSeconds}s; tools: ${tools}; never: ${denied}`);
  }
  return `${lines.join("\n")}\n`;
}
