import type { KernelConfig } from "@antler/kernel";
import { z } from "zod";

/**
 * `plugins[i].config` of `@antler/plugin-sandbox`. The limits shared with other sandbox consumers (output caps,
 * timeouts, host bash) live in the kernel's `sandbox:` section; these only shape this plugin's tool output.
 */
export const sandboxPluginConfigSchema = z.strictObject({
  glob_max_results: z.number().int().positive().default(200).describe("Most paths `glob` returns; the rest are reported as cut."),
  grep_max_results: z.number().int().positive().default(100).describe("Most matching lines `grep` returns; the rest are reported as cut."),
  ls_output_max_chars: z
    .number()
    .int()
    .positive()
    .default(20_000)
    .describe("Longest `ls` listing, in characters; longer ones are cut at the end."),
});

export type SandboxPluginConfig = z.output<typeof sandboxPluginConfigSchema>;

/** Everything the tools need to know about limits: the kernel's `sandbox:` section plus this plugin's config. */
export interface SandboxToolLimits {
  readonly allowHostBash: boolean;
  readonly bashOutputMaxChars: number;
  readonly readFileOutputMaxChars: number;
  readonly lsMaxDepth: number;
  readonly bashTimeoutSeconds: number;
  readonly globMaxResults: number;
  readonly grepMaxResults: number;
  readonly lsOutputMaxChars: number;
}

export function toolLimits(sandbox: KernelConfig["sandbox"], config: SandboxPluginConfig): SandboxToolLimits {
  return Object.freeze({
    allowHostBash: sandbox.allow_host_bash,
    bashOutputMaxChars: sandbox.bash_output_max_chars,
    readFileOutputMaxChars: sandbox.read_file_output_max_chars,
    lsMaxDepth: sandbox.ls_max_depth,
    bashTimeoutSeconds: sandbox.bash_command_timeout_seconds,
    globMaxResults: config.glob_max_results,
    grepMaxResults: config.grep_max_results,
    lsOutputMaxChars: config.ls_output_max_chars,
  });
}
