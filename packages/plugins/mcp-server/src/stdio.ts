import type { Readable, Writable } from "node:stream";
import type { CliIO, Logger } from "@antler/kernel";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { McpServerConfig } from "./config.js";
import { createAntlerMcpServer } from "./server.js";

/** How long live runs get to wind down once the MCP client is gone. */
const CANCEL_WAIT_MS = 5000;

/**
 * `antler mcp serve`: the MCP server over this process's stdin and stdout, as the configured user, until the
 * client closes stdin or SIGINT/SIGTERM arrives. Logs go to stderr (the kernel's logger), so stdout carries only
 * JSON-RPC. Runs still live at the end are cancelled.
 */
export async function serveStdio(io: CliIO, config: McpServerConfig, logger: Logger): Promise<number> {
  const { AntlerClient } = await import("@antler/plugin-runtime");
  const stdin = (io.stdin ?? process.stdin) as Readable;
  const client = new AntlerClient({ kernel: io.kernel, userId: config.stdio.user });
  const server = createAntlerMcpServer({ client, config, logger, caller: { userId: config.stdio.user } });
  const closed = new Promise<string>((resolve) => {
    server.onclose = () => resolve("the MCP connection closed");
  });
  const stop = () => void server.close();
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM"];
  for (const signal of signals) process.on(signal, stop);
  stdin.once("end", stop);
  stdin.once("close", stop);
  try {
    await server.connect(new StdioServerTransport(stdin, io.stdout as Writable));
    logger.info({ user_id: config.stdio.user }, "MCP server on stdio");
    const reason = await closed;
    logger.info({ reason, live_runs: client.activeRuns }, "MCP server stopping");
    // Closing the server aborted every call in flight; wait for their runs to record the cancel.
    await client.cancelAll("the MCP client went away", CANCEL_WAIT_MS);
    return 0;
  } finally {
    for (const signal of signals) process.off(signal, stop);
    stdin.off("end", stop);
    stdin.off("close", stop);
    await client.close();
  }
}
