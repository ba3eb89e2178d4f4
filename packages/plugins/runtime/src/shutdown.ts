/** Why a long-running command (`antler serve`, `antler worker`, `antler acp`) stops. */
export type ShutdownReason = "SIGINT" | "SIGTERM" | "parent exited";

export interface Shutdown {
  /** Resolves with the first reason to stop. */
  readonly reason: Promise<ShutdownReason>;
  /** Removes the signal handlers and the parent watch; done by itself once `reason` resolves. */
  dispose(): void;
}

export interface UntilShutdownOptions {
  /**
   * Also stop when the process that started this one goes away. Default: when started by npm (`npx antler serve`,
   * `npm exec`, `npm run`), which does not pass SIGTERM on to the command, so stopping npm would leave the command
   * running with no parent. Off otherwise: a process manager or `nohup` may leave a command running on purpose.
   */
  followParent?: boolean;
  /** How often the parent is looked at; default 1 s. */
  pollMs?: number;
}

/**
 * Resolves on the first SIGINT or SIGTERM, or (see `followParent`) when the parent process exits. The handlers are
 * removed again, so nothing outlives the command; the parent watch never keeps the process alive by itself.
 */
export function untilShutdown(options: UntilShutdownOptions = {}): Shutdown {
  const followParent = options.followParent ?? process.env.npm_execpath !== undefined;
  const signals = ["SIGINT", "SIGTERM"] as const;
  let handlers: Array<() => void> = [];
  let watch: NodeJS.Timeout | undefined;
  const dispose = () => {
    for (const [i, handler] of handlers.entries()) process.off(signals[i] as ShutdownReason & NodeJS.Signals, handler);
    handlers = [];
    clearInterval(watch);
  };
  const reason = new Promise<ShutdownReason>((resolve) => {
    const stop = (why: ShutdownReason) => {
      dispose();
      resolve(why);
    };
    handlers = signals.map((signal) => {
      const handler = () => stop(signal);
      process.on(signal, handler);
      return handler;
    });
    if (followParent) {
      const parent = process.ppid;
      watch = setInterval(() => process.ppid !== parent && stop("parent exited"), options.pollMs ?? 1000);
      watch.unref();
    }
  });
  return { reason, dispose };
}
