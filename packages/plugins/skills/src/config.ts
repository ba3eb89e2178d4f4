import { z } from "zod";

const MiB = 1024 * 1024;

/** Limits applied to a `.skill` archive before anything is written. */
export const skillInstallLimitsSchema = z.strictObject({
  max_archive_bytes: z
    .number()
    .int()
    .positive()
    .default(10 * MiB)
    .describe("Largest .skill file accepted, in bytes."),
  max_entry_bytes: z
    .number()
    .int()
    .positive()
    .default(5 * MiB)
    .describe("Largest single file inside the archive, uncompressed."),
  max_total_bytes: z
    .number()
    .int()
    .positive()
    .default(20 * MiB)
    .describe("Largest sum of uncompressed file sizes."),
  max_entries: z.number().int().positive().default(500).describe("Most entries (files and folders) in one archive."),
});

/** The `skills:` section of config.yaml, owned by `@antler/plugin-skills`. */
export const skillsSectionSchema = z.strictObject({
  path: z
    .string()
    .min(1)
    .default("skills")
    .describe("Folder (relative to config.yaml) whose public/ subfolder holds the skills shipped with this distribution."),
  deferred_discovery: z
    .boolean()
    .default(false)
    .describe("List only skill names in the prompt and add describe_skill (for hundreds of skills)."),
  recheck_ms: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(1000)
    .describe(
      "How long a turn's skills list may skip looking at the skills folders. Changes made through Antler show at once, edits made on disk by hand or by another process within this time; 0 looks every turn.",
    ),
  disabled: z.array(z.string()).default([]).describe("Skills disabled by default for every user; a user can still enable one."),
  install: skillInstallLimitsSchema.default(skillInstallLimitsSchema.parse({})),
});

export type SkillsSection = z.output<typeof skillsSectionSchema>;
export type SkillsSectionInput = z.input<typeof skillsSectionSchema>;
export type SkillInstallLimits = z.output<typeof skillInstallLimitsSchema>;

export const skillsConfigSections = { skills: skillsSectionSchema.default(skillsSectionSchema.parse({})) };

/** The validated `skills:` section (defaults when absent). */
export function skillsSection(config: Readonly<Record<string, unknown>>): SkillsSection {
  return (config.skills as SkillsSection | undefined) ?? skillsSectionSchema.parse({});
}
