import { Writable } from "node:stream";
import { type DestinationStream, type Logger, pino } from "pino";
import { redactSecrets, redactText } from "./config/redact.js";
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
  const logger = pino(
    {
      level: options.level ?? "info",
      base: undefined,
      ...(enhanced ? { mixin: () => ({ trace_id: getCurrentTraceId() ?? "-" }) } : {}),
      formatters: {
        level: (label) => ({ level: label }),
        // Logged objects (and errors in them) are scrubbed in every shape before pino serialises them.
        log: (object) => redactSecrets(object),
        bindings: (bindings) => redactSecrets(bindings),
      },
      // formatters.log has already turned errors into redacted `{ type, message, stack, ... }`; pino's own err
      // serializer would take that for an error and rename its type to "Object".
      serializers: { err: (value: unknown) => value },
      hooks: {
        // The message and its interpolated arguments never reach formatters.log: scrub them here.
        logMethod(args, method) {
          const scrubbed = args.map((a, i) =>
            typeof a === "string" ? redactText(a) : i > 0 && a !== null && typeof a === "object" ? redactSecrets(a) : a,
          );
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    destination as DestinationStream,
  );
  // pino applies formatters.bindings to the root only; children (and theirs, which inherit this method) would
  // write their bindings verbatim, so they are scrubbed on the way in.
  const child = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, options) {
    return child.call(this, redactSecrets(bindings), options);
  } as typeof logger.child;
  return logger;
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
