import { Readable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import type { CliIO, Logger } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import { createAcpAgent } from "./agent-side.js";
import type { EditorBridge } from "./editor-bridge.js";

export interface ServeAcpStdioOptions {
  io: CliIO;
  client: AntlerClient;
  userId: string;
  agent?: string | undefined;
  model?: string | undefined;
  logger: Logger;
  version: string;
  editor?: EditorBridge | undefined;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM). */
  shutdown: Promise<unknown>;
}

/** How long live prompt turns get to end cancelled when the command stops. */
const CANCEL_WAIT_MS = 5_000;

/**
 * Serves one ACP connection on the command's stdin/stdout until the client closes stdin or the process is asked
 * to stop. Stdout carries only protocol frames: while the connection is open, anything else written to the
 * process's stdout (a stray `console.log`) is sent to stderr instead.
 */
export async function serveAcpStdio(options: ServeAcpStdioOptions): Promise<"closed" | "signal"> {
  const { io, logger } = options;
  const stdin = io.stdin ?? process.stdin;
  const stdout = io.stdout;
  const writeFrame = stdout.write.bind(stdout) as (chunk: Uint8Array, callback: (err?: Error | null) => void) => boolean;
  const restoreStdout = stdout === process.stdout ? divertProcessStdout(io.stderr) : () => {};
  const output = new WritableStream<Uint8Array>({
    write: (chunk) => new Promise<void>((resolve, reject) => void writeFrame(chunk, (err) => (err ? reject(err) : resolve()))),
  });
  const input = Readable.toWeb(stdin as Readable) as ReadableStream<Uint8Array>;
  const connection = createAcpAgent(options).connect(ndJsonStream(output, input));
  logger.info({ user_id: options.userId, agent: options.agent ?? null }, "ACP agent serving on stdio");
  try {
    const reason = await Promise.race([connection.closed.then(() => "closed" as const), options.shutdown.then(() => "signal" as const)]);
    logger.info({ reason }, "ACP agent stopping");
    // Live turns end cancelled (their records say so) before the client is closed.
    await options.client.cancelAll("the ACP agent is shutting down", CANCEL_WAIT_MS);
    connection.close();
    return reason;
  } finally {
    restoreStdout();
    // A pipe left open keeps the process alive after the command returns.
    (stdin as Readable).destroy?.();
  }
}

/** Sends `process.stdout.write` to stderr until the returned function restores it. */
function divertProcessStdout(stderr: NodeJS.WritableStream): () => void {
  const original = process.stdout.write;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) =>
    (stderr.write as (...args: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stdout.write;
  return () => {
    process.stdout.write = original;
  };
}
