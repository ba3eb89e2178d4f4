import { type AntlerTool, type ExecResult, SANDBOX_VIRTUAL_ROOTS } from "@antler/kernel";
import { defineTool } from "@antler/kernel/authoring";
import { z } from "zod";
import { descriptionArg, type SandboxToolOptions } from "./file-tools.js";
import { truncateMiddle } from "./output.js";
import { errorText, openSession, refusal } from "./tool-session.js";

export const BASH_TOOL_NAME = "bash";

export interface BashToolOptions extends SandboxToolOptions {
  /** Whether commands may run now: the provider isolates them, or `sandbox.allow_host_bash` is set. */
  hostBashAllowed(): boolean;
  /** The selected provider's id, for the refusal message. */
  providerId(): string | undefined;
}

/** The refusal when `bash` is called on a provider that would run it on the host without permission. */
export function hostBashRefusalText(providerId: string | undefined): string {
  return (
    `bash is disabled: the sandbox provider${providerId ? ` "${providerId}"` : ""} runs commands directly on the host, and sandbox.allow_host_bash is false. ` +
    "Use the file tools (ls, glob, grep, read_file, write_file, str_replace) instead; " +
    "to allow host commands, the operator must set sandbox.allow_host_bash: true in config.yaml (trusted setups only)."
  );
}

export const bashSchema = z.object({
  description: descriptionArg,
  command: z
    .string()
    .min(1)
    .describe(`The bash command line to run. It starts in ${SANDBOX_VIRTUAL_ROOTS.workspace}; refer to files by their /mnt/... paths.`),
  timeout_seconds: z
    .number()
    .positive()
    .optional()
    .describe("Kill the command (and everything it started) after this many seconds. Default and maximum: the configured limit."),
});

/** Output first, then what the model must know about how the command ended; the footer survives truncation. */
export function formatExecResult(result: ExecResult, timeoutSeconds: number, maxChars: number): string {
  const parts: string[] = [];
  const stdout = result.stdout.replace(/\s+$/, "");
  const stderr = result.stderr.replace(/\s+$/, "");
  if (stdout) parts.push(stdout);
  if (stderr) parts.push(`[stderr]\n${stderr}`);
  let footer = "";
  if (result.timedOut) footer = `[timed out after ${timeoutSeconds}s; the command and every process it started were killed]`;
  else if (result.exitCode === null) footer = `[killed by signal ${result.signal ?? "unknown"}]`;
  else if (result.exitCode !== 0) footer = `[exit code ${result.exitCode}]`;
  const body = parts.join("\n");
  if (!body) return footer || "(no output)";
  if (!footer) return truncateMiddle(body, maxChars);
  return `${truncateMiddle(body, Math.max(1, maxChars - footer.length - 1))}\n${footer}`;
}

export function createBashTool(options: BashToolOptions): AntlerTool {
  const { registry, limits } = options;
  const cap = limits.bashTimeoutSeconds;
  return defineTool({
    name: BASH_TOOL_NAME,
    description:
      `Run a bash command in the sandbox, from ${SANDBOX_VIRTUAL_ROOTS.workspace}. Files are under /mnt/user-data/{workspace,uploads,outputs}; ` +
      `/mnt/skills is read-only. Output over ${limits.bashOutputMaxChars} characters keeps its beginning and end. ` +
      `Commands are killed after timeout_seconds (at most ${cap}). Prefer the file tools for reading and editing files.`,
    schema: bashSchema,
    async run({ command, timeout_seconds }, runtime) {
      // The tool is left out when host bash is off, but an agent composed by hand may still carry it.
      if (!options.hostBashAllowed()) return refusal(runtime, BASH_TOOL_NAME, hostBashRefusalText(options.providerId()));
      const session = await openSession(registry, runtime, BASH_TOOL_NAME);
      if (!session.ok) return session.message;
      const timeoutSeconds = Math.min(timeout_seconds ?? cap, cap);
      let result: ExecResult;
      try {
        result = await session.lease.sandbox.executeCommand(command, {
          timeout: Math.round(timeoutSeconds * 1000),
          ...(runtime.signal ? { signal: runtime.signal } : {}),
        });
      } catch (err) {
        return refusal(runtime, BASH_TOOL_NAME, `the command could not be run: ${errorText(err)}`);
      }
      return formatExecResult(result, timeoutSeconds, limits.bashOutputMaxChars);
    },
  });
}
