import { Writable } from "node:stream";
import { createKernel } from "../boot.js";
import type { KernelConfigInput } from "../config/schema.js";
import type { CodePlugin } from "../kernel.js";
import { createLogger, type Logger } from "../logging.js";
import type { Kernel } from "../plugin.js";

export interface CapturedLogs {
  readonly logger: Logger;
  /** Parsed JSON log lines, in order. */
  readonly lines: Array<Record<string, unknown>>;
}

/** A real pino logger whose lines are kept in memory for assertions. */
export function captureLogs(options: { level?: string; enhance?: boolean } = {}): CapturedLogs {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level: options.level ?? "debug", enhance: { enabled: options.enhance ?? true }, destination });
  return { logger, lines };
}

export interface TestKernelOptions {
  plugins?: readonly CodePlugin[];
  config?: KernelConfigInput;
  /** YAML text instead of `config`. */
  configText?: string;
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  logger?: Logger;
  /** Call `kernel.start()` before returning. Default true. */
  start?: boolean;
  /**
   * Load the default preset (`@antler/plugin-runtime`, cassette models, SQLite storage), which must then be
   * installed. Default false: a plugin is tested on its own, with only the plugins given here.
   */
  builtins?: boolean;
}

/**
 * A kernel for tests: no default preset unless `builtins: true`, no config discovery (nothing is read from the working directory or ANTLER_CONFIG),
 * logs captured in memory, started by default. Close it in `afterEach`.
 */
export async function createTestKernel(options: TestKernelOptions = {}): Promise<Kernel & { logs: CapturedLogs["lines"] }> {
  const captured = options.logger ? undefined : captureLogs();
  const kernel = await createKernel({
    plugins: options.plugins,
    config: options.configText === undefined ? (options.config ?? {}) : undefined,
    configText: options.configText,
    discover: false,
    cwd: options.cwd,
    env: options.env ?? {},
    logger: options.logger ?? captured?.logger,
    builtins: options.builtins ?? false,
  });
  if (options.start !== false) await kernel.start();
  return Object.assign(kernel, { logs: captured?.lines ?? [] });
}
