import { resolve } from "node:path";
import { createToken, DEFAULT_USER_ID, definePlugin, KERNEL, type Kernel } from "@antler/kernel";
import { provideGatewayRoutes } from "@antler/plugin-runtime/routes";
import { SkillCatalog } from "./catalog.js";
import { skillsCommands } from "./cli.js";
import { skillsConfigSections, skillsSection } from "./config.js";
import { skillsRoutes } from "./http.js";
import { SKILL_MOUNTS } from "./mounts.js";
import { SkillsService } from "./service.js";

export const PLUGIN_NAME = "@antler/plugin-skills";
export const PLUGIN_VERSION = "0.1.0";

/** The kernel's skills service: `kernel.scope.resolve(SKILLS)`, or `skillsOf(client)`. */
export const SKILLS = createToken<SkillsService>("plugin-skills.service");

/** The skills API of a kernel, or of an `AntlerClient` (its `kernel`): list, get, enable/disable, install, remove. */
export function skillsOf(owner: Kernel | { kernel: Kernel }): SkillsService {
  const kernel = "scope" in owner ? owner : owner.kernel;
  return kernel.scope.resolve(SKILLS);
}

export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  kernel: "^0.1.0",
  description:
    "Skills: SKILL.md folders in the prompt, /skill-name activation, allowed-tools enforced at call time, validated .skill installs.",
  configSections: skillsConfigSections,
  setup(ctx) {
    const section = skillsSection(ctx.kernelConfig);
    const publicDir = resolve(ctx.paths.configDir, section.path, "public");
    let service: SkillsService | undefined;
    const create = (kernel: Kernel): SkillsService => {
      if (service) return service;
      const catalog = new SkillCatalog({ publicDir, baseDir: ctx.paths.baseDir, disabledByDefault: section.disabled, logger: ctx.logger });
      // Agents built before a change may carry its prompt or policy: drop them (loaded only once something changes).
      catalog.onChange(() => {
        void import("@antler/plugin-runtime").then((runtime) => runtime.resetAgents(kernel));
      });
      service = new SkillsService(catalog, section.install);
      return service;
    };
    ctx.provide(SKILLS, { useFactory: (scope) => create(scope.resolve(KERNEL)) });
    const catalogOf = (kernel: Kernel) => create(kernel).catalog;
    ctx.provide(SKILL_MOUNTS, {
      useFactory: (scope) => {
        const catalog = catalogOf(scope.resolve(KERNEL));
        return { hostDirs: (userId: string) => ({ public: catalog.publicDir, custom: catalog.userDirs(userId).custom }) };
      },
    });

    ctx.middleware.add(
      {
        name: "skills",
        create: async (assembly) => {
          const kernel = ctx.services.resolve(KERNEL);
          const allowlist = await agentAllowlist(kernel, assembly.context);
          const { skillsMiddleware } = await import("./middleware.js");
          return skillsMiddleware({
            catalog: catalogOf(kernel),
            deferred: section.deferred_discovery,
            allowlist,
            recheckMs: section.recheck_ms,
          });
        },
      },
      { stage: "normal" },
    );
    if (section.deferred_discovery) {
      ctx.tools.add(
        async (assembly) => {
          const kernel = ctx.services.resolve(KERNEL);
          const allowlist = await agentAllowlist(kernel, assembly.context);
          return (await import("./tools.js")).describeSkillTool(catalogOf(kernel), () => allowlist);
        },
        { source: "plugin", name: "describe_skill" },
      );
    }
    const resolveService = (kernel: Kernel) => kernel.scope.resolve(SKILLS);
    for (const command of skillsCommands(resolveService)) ctx.commands.add(command);
    provideGatewayRoutes(ctx, { routes: skillsRoutes(resolveService) });
  },
});

/** A custom agent's `skills:` allowlist (only those skills are listed and activatable in its runs). */
async function agentAllowlist(kernel: Kernel, context: Readonly<Record<string, unknown>>): Promise<ReadonlySet<string> | undefined> {
  const name = context.agent_name;
  if (typeof name !== "string" || name === "") return undefined;
  const userId = typeof context.user_id === "string" ? context.user_id : DEFAULT_USER_ID;
  const { loadCustomAgent } = await import("@antler/plugin-runtime");
  const agent = await loadCustomAgent(kernel, { userId, name });
  return agent?.skills ? new Set(agent.skills) : undefined;
}
