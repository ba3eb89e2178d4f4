import { randomUUID } from "node:crypto";
import { DEFAULT_USER_ID, type MiddlewareSpec } from "@antler/kernel";
import { type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { SKILLS_CONTAINER_PATH, type SkillCatalog, type SkillRecord, type SkillsView } from "./catalog.js";
import { RESERVED_SLASH_WORDS } from "./frontmatter.js";

/** Tools a skill's `allowed-tools` never takes away: asking the user, presenting files, and reading skills. */
export const FRAMEWORK_TOOLS: ReadonlySet<string> = new Set(["ask_clarification", "present_files", "describe_skill", "read_file"]);

/** `additional_kwargs` key of the hidden message that carries an activated skill's body. */
export const ACTIVATION_KEY = "antler_skill_activation";
/** `additional_kwargs` key with the skill's `allowed-tools` as activated (null: no policy). */
export const ALLOWED_TOOLS_KEY = "antler_skill_allowed_tools";

/** The policy of the skill active in this turn, as it was when the user started it. */
export interface ActivePolicy {
  name: string;
  allowedTools: readonly string[] | undefined;
}

export interface SkillsMiddlewareOptions {
  catalog: SkillCatalog;
  /** List only names (`<skill_index>`) and rely on `describe_skill`. */
  deferred: boolean;
  /** The custom agent's `skills:` allowlist for this agent build; undefined means every enabled skill. */
  allowlist?: ReadonlySet<string> | undefined;
  /** How long a turn's skills list may skip looking at the skills folders (`skills.recheck_ms`); default 0. */
  recheckMs?: number | undefined;
}

const SLASH = /^\s*\/([a-z0-9][a-z0-9-]{0,63})(?=\s|$)/;

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function textOf(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content.map((part) => (typeof part === "string" ? part : part.type === "text" ? String(part.text ?? "") : "")).join("");
}

function isActivation(message: BaseMessage): boolean {
  return HumanMessage.isInstance(message) && typeof message.additional_kwargs?.[ACTIVATION_KEY] === "string";
}

/** The skill a `/name ...` message asks for, if the text starts with a slash word that is not reserved. */
export function slashSkillName(text: string): string | undefined {
  const name = SLASH.exec(text)?.[1];
  return name === undefined || RESERVED_SLASH_WORDS.has(name) ? undefined : name;
}

/**
 * This turn's user message and the skill activated in it. A turn starts at the last human message that is not an
 * activation; only messages after it belong to the turn, so the scan is as long as the turn, not the thread.
 */
export function currentTurn(messages: readonly BaseMessage[]): { user: BaseMessage | undefined; active: ActivePolicy | undefined } {
  let active: ActivePolicy | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as BaseMessage;
    if (!HumanMessage.isInstance(m)) continue;
    if (isActivation(m)) {
      const tools = m.additional_kwargs[ALLOWED_TOOLS_KEY];
      active ??= {
        name: m.additional_kwargs[ACTIVATION_KEY] as string,
        allowedTools: Array.isArray(tools) ? tools.filter((t): t is string => typeof t === "string") : undefined,
      };
      continue;
    }
    return { user: m, active };
  }
  return { user: undefined, active };
}

function userOf(runtime: { context?: unknown } | undefined): string {
  const id = (runtime?.context as { user_id?: unknown } | undefined)?.user_id;
  return typeof id === "string" && id !== "" ? id : DEFAULT_USER_ID;
}

/** The skills the model may see and activate in this agent: enabled, and on the custom agent's allowlist. */
export function visibleSkills(view: SkillsView, allowlist: ReadonlySet<string> | undefined): readonly SkillRecord[] {
  if (!allowlist) return view.enabled;
  const key = `visible:${[...allowlist].sort().join(",")}`;
  let list = view.memo.get(key) as SkillRecord[] | undefined;
  if (!list) {
    list = view.enabled.filter((s) => allowlist.has(s.name));
    view.memo.set(key, list);
  }
  return list;
}

/** The `<skill_system>` section for the system prompt: full entries, or names only in deferred mode. */
export function renderSkillSection(skills: readonly SkillRecord[], deferred: boolean): string {
  if (skills.length === 0) return "";
  const intro =
    "<skill_system>\nSkills are folders of instructions for particular kinds of work, mounted read-only at " +
    `${SKILLS_CONTAINER_PATH}. When a task matches a skill, read its SKILL.md with read_file before starting and follow it; ` +
    "open the other files it mentions only when you need them. A user can also start a skill with /skill-name.\n";
  if (deferred) {
    return `${intro}Call describe_skill with a name to see what a skill is for and where its SKILL.md is.\n<skill_index>${skills.map((s) => s.name).join(", ")}</skill_index>\n</skill_system>`;
  }
  const entries = skills
    .map(
      (s) =>
        `<skill>\n<name>${s.name}</name>\n<description>${escapeXml(s.description)}</description>\n<location>${s.location}</location>\n</skill>`,
    )
    .join("\n");
  return `${intro}<available_skills>\n${entries}\n</available_skills>\n</skill_system>`;
}

function refusal(request: { toolCall: { id?: string | undefined; name: string } }, skill: ActivePolicy, why: string): ToolMessage {
  return new ToolMessage({
    content: `Error: ${why} The active skill "${skill.name}" allows only: ${(skill.allowedTools ?? []).join(", ") || "(no tools)"}, plus ${[...FRAMEWORK_TOOLS].join(", ")} (read_file only under ${SKILLS_CONTAINER_PATH}).`,
    tool_call_id: request.toolCall.id ?? "",
    name: request.toolCall.name,
    status: "error",
    additional_kwargs: { antler_skill_policy: { skill: skill.name, tool: request.toolCall.name } },
  });
}

/** Whether the active skill's policy lets this call through. */
export function policyAllows(skill: ActivePolicy, toolName: string, args: unknown): boolean {
  const allowed = skill.allowedTools;
  if (allowed === undefined || allowed.includes(toolName)) return true;
  if (toolName === "read_file") {
    const path = (args as { path?: unknown } | undefined)?.path;
    return typeof path === "string" && isUnderSkills(path);
  }
  return FRAMEWORK_TOOLS.has(toolName);
}

function isUnderSkills(path: string): boolean {
  const parts = path.split("/");
  if (parts.includes("..")) return false;
  return path === SKILLS_CONTAINER_PATH || path.startsWith(`${SKILLS_CONTAINER_PATH}/`);
}

/**
 * One middleware for the whole feature:
 * - `beforeModel` (inline, no graph step): a `/skill-name ...` user message gets the skill's body as a hidden
 *   message right after it, once; later model calls and turns see it in the history and add nothing.
 * - `wrapModelCall`: appends the `<skill_system>` section to the system prompt, and while a skill with
 *   `allowed-tools` is active offers only those tools and the framework tools.
 * - `wrapToolCall`: refuses, with an error tool message naming the skill, any call the active skill does not allow,
 *   so a model that calls a tool it was not offered still cannot run it.
 */
export function skillsMiddleware(options: SkillsMiddlewareOptions): MiddlewareSpec {
  const { catalog, deferred, allowlist, recheckMs = 0 } = options;
  // The policy recorded with the activation holds for the rest of the turn, even if the skill is edited,
  // disabled or removed meanwhile: the body the model follows is the one it was given.
  const activeSkill = (messages: readonly BaseMessage[]): ActivePolicy | undefined => currentTurn(messages).active;
  const section = (view: SkillsView): string => {
    const key = `section:${deferred}:${allowlist ? [...allowlist].sort().join(",") : "*"}`;
    let text = view.memo.get(key) as string | undefined;
    if (text === undefined) {
      text = renderSkillSection(visibleSkills(view, allowlist), deferred);
      view.memo.set(key, text);
    }
    return text;
  };
  // The section is looked up at the turn's first model call (a few `stat` calls, at most every recheckMs); the
  // turn's later calls reuse it, so one turn shows the model one skills list. Keyed by the turn's user message,
  // which the turn's calls share.
  const turnSections = new WeakMap<BaseMessage, { userId: string; text: string }>();
  const sectionForTurn = (user: BaseMessage | undefined, userId: string): string => {
    const known = user ? turnSections.get(user) : undefined;
    if (known?.userId === userId) return known.text;
    const text = section(catalog.view(userId, recheckMs));
    if (user) turnSections.set(user, { userId, text });
    return text;
  };
  // The system message with the section appended, per base message and section: the same object on every call
  // instead of a new concatenation.
  const composed = new WeakMap<SystemMessage, { text: string; message: SystemMessage }>();
  const withSection = (base: SystemMessage, text: string): SystemMessage => {
    const known = composed.get(base);
    if (known?.text === text) return known.message;
    const message = base.text === "" ? new SystemMessage(text) : base.concat(`\n\n${text}`);
    composed.set(base, { text, message });
    return message;
  };
  return {
    name: "skills",
    beforeModel(state, runtime) {
      const { user, active } = currentTurn(state.messages);
      if (!user || active !== undefined) return;
      const name = slashSkillName(textOf(user));
      if (name === undefined) return;
      const view = catalog.view(userOf(runtime));
      const skill = visibleSkills(view, allowlist).find((s) => s.name === name);
      if (!skill) return;
      let body: string;
      try {
        body = catalog.readBody(skill);
      } catch {
        // Removed or broken since it was listed: the message goes on as plain text rather than failing the turn.
        return;
      }
      const note = new HumanMessage({
        id: `skill-activation-${randomUUID()}`,
        content: `<skill_activation name="${skill.name}" location="${skill.location}">\nThe user started the skill "${skill.name}" for this task. Follow its instructions:\n\n${body.trim()}\n</skill_activation>`,
        additional_kwargs: { [ACTIVATION_KEY]: skill.name, [ALLOWED_TOOLS_KEY]: skill.allowedTools ?? null, hide_from_ui: true },
      });
      return { messages: [note] };
    },
    async wrapModelCall(request, handler) {
      const { user, active } = currentTurn(request.state.messages);
      const text = sectionForTurn(user, userOf(request.runtime));
      let next = request;
      if (text !== "") next = { ...next, systemMessage: withSection(request.systemMessage, text) };
      if (active?.allowedTools !== undefined) {
        const allowed = new Set([...active.allowedTools, ...FRAMEWORK_TOOLS]);
        next = { ...next, tools: next.tools.filter((t) => allowed.has(String((t as { name?: unknown }).name))) };
      }
      return handler(next);
    },
    async wrapToolCall(request, handler) {
      const skill = activeSkill(request.state.messages);
      if (!skill || policyAllows(skill, request.toolCall.name, request.toolCall.args)) return handler(request);
      const why =
        request.toolCall.name === "read_file"
          ? `read_file may only read ${SKILLS_CONTAINER_PATH} while this skill is active.`
          : `the tool "${request.toolCall.name}" is not allowed while the skill "${skill.name}" is active.`;
      return refusal(request, skill, why);
    },
  };
}
