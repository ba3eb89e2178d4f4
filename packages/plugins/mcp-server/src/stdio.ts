import type { Readable, Writable } from "node:stream";
import type { CliIO, Logger } from "@antler/kernel";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { McpServerConfig } from "./config.js";
import { checkExposedTools } from "./exposed-tools.js";
import { createAntlerMcpServer } from "./server.js";

/** How long live runs get to wind down once the MCP client is gone. */
const CANCEL_WAIT_MS = 5000;

/**
 * `antler mcp serve`: the MCP server over this process's stdin and stdout, as the configured user, until the
 * client closes stdin or SIGINT/SIGTERM arrives. Logs go to stderr (the kernel's logger), so stdout carries only
 * JSON-RPC. Runs still live at the end are cancelled.
 */
export async function serveStdio(io: CliIO, config: McpServerConfig, logger: Logger): Promise<number> {
  const { AntlerClient, untilShutdown } = await import("@antler/plugin-runtime");
  const stdin = (io.stdin ?? process.stdin) as Readable;
  // An unknown or unexposable expose_tools entry stops the command before any client connects.
  await checkExposedTools(io.kernel, config, { userId: config.stdio.user });
  const client = new AntlerClient({ kernel: io.kernel, userId: config.stdio.user });
  const server = createAntlerMcpServer({ client, config, logger, caller: { userId: config.stdio.user } });
  let reason = "the MCP connection closed";
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const stopOn = (why: string) => () => {
    reason = why;
    void server.close();
  };
  const shutdown = untilShutdown();
  void shutdown.reason.then((why) => stopOn(why)());
  const onEnd = stopOn("stdin closed");
  stdin.once("end", onEnd);
  stdin.once("close", onEnd);
  try {
    await server.connect(new StdioServerTransport(stdin, io.stdout as Writable));
    logger.info({ user_id: config.stdio.user }, "MCP server on stdio");
    await closed;
    const live = client.activeRuns;
    // Closing the server aborted every call in flight; wait for their runs to record the cancel.
    await client.cancelAll("the MCP client went away", CANCEL_WAIT_MS);
    // stderr, never stdout: stdout is the protocol's.
    io.stderr.write(`antler mcp serve: stopped (${reason}; ${live} live runs cancelled)\n`);
    return 0;
  } finally {
    shutdown.dispose();
    stdin.off("end", onEnd);
    stdin.off("close", onEnd);
    await client.close();
  }
}
