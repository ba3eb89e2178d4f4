import { parseArgs } from "node:util";
import { AntlerError, assertSafeId, type CliCommand, type CliIO, ErrorCodes, type Logger } from "@antler/kernel";
import type { AcpServeConfig } from "./config.js";
import type { EditorBridge } from "./editor-bridge.js";

const USAGE = "antler acp [--config <file>] [--user <id>] [--agent <name>] [--model <name>]";

/** The command's flags over the plugin's `serve:` config. */
export function serveSettings(args: string[], config: AcpServeConfig): { userId: string; agent?: string; model?: string } {
  const { values } = parseArgs({
    args,
    options: { user: { type: "string" }, agent: { type: "string" }, model: { type: "string" }, verbose: { type: "boolean", short: "v" } },
    allowPositionals: false,
    strict: true,
  });
  const userId = values.user ?? config.user;
  try {
    assertSafeId("user", userId);
  } catch (err) {
    throw new AntlerError(ErrorCodes.CONFIG_INVALID, (err as Error).message.split("\n")[0] ?? "bad user id", {
      where: values.user === undefined ? "plugins[@antler/plugin-acp].config.serve.user" : "--user",
      hint: "Use 1–128 characters of letters, digits, '.', '_', '@' and '-'.",
    });
  }
  const agent = values.agent ?? config.agent;
  const model = values.model ?? config.model;
  return { userId, ...(agent === undefined ? {} : { agent }), ...(model === undefined ? {} : { model }) };
}

/** `antler acp`: serve an Antler agent to one ACP client (an editor such as Zed) over stdio. */
export function acpCommand(options: { config: AcpServeConfig; logger: Logger; version: string; editor?: EditorBridge }): CliCommand {
  return {
    name: "acp",
    summary: "Serve an Antler agent over the Agent Client Protocol on stdio (for editors such as Zed), until stdin closes or SIGTERM.",
    usage: USAGE,
    async run(args: string[], io: CliIO) {
      const settings = serveSettings(args, options.config);
      // The runtime, the SDK and the event mapping load when the command runs, not with the plugin.
      const [{ AntlerClient, untilShutdown }, { serveAcpStdio }] = await Promise.all([
        import("@antler/plugin-runtime"),
        import("./agent-stdio.js"),
      ]);
      const shutdown = untilShutdown();
      const client = new AntlerClient({ kernel: io.kernel, userId: settings.userId });
      try {
        await serveAcpStdio({
          io,
          client,
          logger: options.logger,
          version: options.version,
          editor: options.editor,
          shutdown: shutdown.reason,
          ...settings,
        });
        return 0;
      } finally {
        shutdown.dispose();
        await client.close();
      }
    },
  };
}
