import { type ParseArgsConfig, parseArgs } from "node:util";
import type { CliCommand, CliIO, Kernel } from "@antler/kernel";
import { SkillErrorCodes, skillError } from "./errors.js";
import type { SkillResponse } from "./schemas.js";
import type { SkillsService } from "./service.js";

const write = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);

type Resolve = (kernel: Kernel) => SkillsService;

function parse(args: string[], options: NonNullable<ParseArgsConfig["options"]>, usage: string) {
  try {
    const parsed = parseArgs({
      args,
      options: { ...options, user: { type: "string", short: "u" }, json: { type: "boolean" }, config: { type: "string", short: "c" } },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
  } catch (err) {
    throw skillError(SkillErrorCodes.INVALID, (err as Error).message, { hint: `Usage: ${usage}` });
  }
}

function one(positionals: string[], what: string, usage: string): string {
  const value = positionals[0];
  if (!value || positionals.length > 1) {
    throw skillError(SkillErrorCodes.INVALID, value ? `give exactly one ${what}` : `give a ${what}`, { hint: `Usage: ${usage}` });
  }
  return value;
}

function line(skill: SkillResponse): string {
  const policy = skill.allowed_tools ? `  allowed-tools: ${skill.allowed_tools.join(", ") || "(none)"}` : "";
  return `${skill.enabled ? "●" : "○"} ${skill.name}  [${skill.category}${skill.enabled ? "" : ", disabled"}]  ${skill.description.split("\n")[0]}${policy}`;
}

/** `antler skills list|show|enable|disable|install|rm`. `--user` acts for a user (default "default"). */
export function skillsCommands(resolve: Resolve): CliCommand[] {
  const userOf = (values: Record<string, string | boolean | undefined>) => ({ userId: (values.user as string | undefined) ?? undefined });
  const json = (io: CliIO, value: unknown) => write(io.stdout, JSON.stringify(value, null, 2));
  return [
    {
      name: "skills list",
      summary: "List the skills this user sees: public and custom, enabled or not, and broken ones with the reason.",
      usage: "antler skills list [--user id] [--enabled] [--reload] [--json]",
      run(args, io) {
        const usage = "antler skills list [--user id] [--enabled] [--reload] [--json]";
        const { values } = parse(args, { enabled: { type: "boolean" }, reload: { type: "boolean" } }, usage);
        const service = resolve(io.kernel);
        if (values.reload) service.catalog.reload();
        const list = service.listSkills({ ...userOf(values), enabledOnly: values.enabled === true });
        if (values.json) {
          json(io, list);
          return 0;
        }
        if (list.skills.length === 0) write(io.stdout, `no skills (public skills folder: ${service.catalog.publicDir})`);
        for (const skill of list.skills) write(io.stdout, line(skill));
        for (const issue of list.issues) write(io.stderr, `✖ ${issue.category}/${issue.folder}: ${issue.message}`);
        return 0;
      },
    },
    {
      name: "skills show",
      summary: "Show one skill: its frontmatter, location and body.",
      usage: "antler skills show <name> [--user id] [--json]",
      run(args, io) {
        const usage = "antler skills show <name> [--user id] [--json]";
        const { values, positionals } = parse(args, {}, usage);
        const skill = resolve(io.kernel).getSkill(one(positionals, "skill name", usage), userOf(values));
        if (values.json) json(io, skill);
        else write(io.stdout, `${line(skill)}\nlocation: ${skill.location}\n\n${skill.body}`);
        return 0;
      },
    },
    ...(["enable", "disable"] as const).map(
      (verb): CliCommand => ({
        name: `skills ${verb}`,
        summary: `${verb === "enable" ? "Enable" : "Disable"} a skill for a user.`,
        usage: `antler skills ${verb} <name> [--user id]`,
        run(args, io) {
          const usage = `antler skills ${verb} <name> [--user id]`;
          const { values, positionals } = parse(args, {}, usage);
          const skill = resolve(io.kernel).updateSkill(
            one(positionals, "skill name", usage),
            { enabled: verb === "enable" },
            userOf(values),
          );
          if (values.json) json(io, skill);
          else write(io.stdout, `${verb}d ${skill.name}`);
          return 0;
        },
      }),
    ),
    {
      name: "skills install",
      summary: "Install a .skill archive (a ZIP with SKILL.md) as a user's custom skill, after validating all of it.",
      usage: "antler skills install <file.skill> [--user id] [--json]",
      async run(args, io) {
        const usage = "antler skills install <file.skill> [--user id] [--json]";
        const { values, positionals } = parse(args, {}, usage);
        const { resolve: resolvePath } = await import("node:path");
        const result = await resolve(io.kernel).installSkill(resolvePath(io.cwd, one(positionals, "file", usage)), userOf(values));
        if (values.json) json(io, result);
        else write(io.stdout, result.message);
        return 0;
      },
    },
    {
      name: "skills rm",
      summary: "Remove a user's custom skill.",
      usage: "antler skills rm <name> [--user id]",
      run(args, io) {
        const usage = "antler skills rm <name> [--user id]";
        const { values, positionals } = parse(args, {}, usage);
        const result = resolve(io.kernel).removeSkill(one(positionals, "skill name", usage), userOf(values));
        if (values.json) json(io, result);
        else write(io.stdout, `removed ${result.skill_name}`);
        return 0;
      },
    },
  ];
}
