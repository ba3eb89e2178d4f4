import { Writable } from "node:stream";
import { type DestinationStream, type Logger, pino } from "pino";
import { redactText } from "./config/redact.js";
import { getCurrentTraceId } from "./trace.js";

export type { Logger } from "pino";

export interface LoggingOptions {
  level?: string;
  /** `logging.enhance` in config.yaml: adds `trace_id` to every line ("-" before an entry point). */
  enhance?: { enabled?: boolean; format?: "json" | "text" };
  /** Where lines go; stderr by default so that stdout stays clean for CLI output. */
  destination?: DestinationStream | NodeJS.WritableStream;
}

/**
 * The kernel's logger. `logging.enhance.enabled` gates only whether `trace_id` is written; the id itself
 * exists and is propagated either way.
 */
export function createLogger(options: LoggingOptions = {}): Logger {
  const enhanced = options.enhance?.enabled === true;
  const format = options.enhance?.format ?? "json";
  let destination: DestinationStream | NodeJS.WritableStream = options.destination ?? process.stderr;
  if (format === "text") destination = textDestination(destination);
  return pino(
    {
      level: options.level ?? "info",
      base: undefined,
      ...(enhanced ? { mixin: () => ({ trace_id: getCurrentTraceId() ?? "-" }) } : {}),
      formatters: { level: (label) => ({ level: label }) },
      hooks: {
        // Free-text log arguments can carry a URL with a password or a bearer token; scrub before writing.
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === "string" ? redactText(a) : a)) as Parameters<typeof method>);
        },
      },
    },
    destination as DestinationStream,
  );
}

function textDestination(target: DestinationStream | NodeJS.WritableStream): NodeJS.WritableStream {
  return new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) {
        if (!line) continue;
        try {
          const { time, level, msg, trace_id, ...rest } = JSON.parse(line) as Record<string, unknown>;
          const extras = Object.entries(rest)
            .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
            .join(" ");
          const when = new Date(Number(time)).toISOString();
          const trace = trace_id === undefined ? "" : ` trace_id=${String(trace_id)}`;
          target.write(`${when} ${String(level).toUpperCase()}${trace} ${String(msg ?? "")}${extras ? ` ${extras}` : ""}\n`);
        } catch {
          target.write(`${line}\n`);
        }
      }
      done();
    },
  });
}

/** A logger that drops everything; handy for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
