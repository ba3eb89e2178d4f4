// Both server children (antler-server.mjs, langgraph-server.mjs) and the benchmarks talk over the fork IPC channel:
// the child sends `{ ready, url }` once listening; the parent asks `{ id, cmd: "stats" }` (the child's own CPU time
// and, after a GC, heap and RSS) or `{ id, cmd: "close" }`.
import { fork } from "node:child_process";

/** Child side: answers the parent's commands; `close` runs `shutdown` and exits. */
export function serveStats(url, shutdown) {
  process.on("message", async (message) => {
    if (message.cmd === "stats") {
      if (message.gc) for (let i = 0; i < 3; i++) global.gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      process.send({ id: message.id, cpu: process.cpuUsage(), heapUsed, rss });
    } else if (message.cmd === "close") {
      await shutdown().catch(() => undefined);
      process.send({ id: message.id, closed: true }, () => process.exit(0));
    }
  });
  // A benchmark that dies (a crash, a closed pipe) must not leave its servers running.
  process.once("disconnect", () => process.exit(1));
  process.send({ ready: true, url });
}

/** Parent side: forks `script` (with --expose-gc) and resolves once it listens. */
export function startServerProcess(script, env, { timeoutMs = 120_000 } = {}) {
  const child = fork(script, [], {
    env: { ...process.env, ...env },
    execArgv: ["--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let next = 0;
  const pending = new Map();
  child.on("message", (message) => {
    const resolve = pending.get(message.id);
    if (resolve) {
      pending.delete(message.id);
      resolve(message);
    }
  });
  const ask = (cmd, extra = {}) =>
    new Promise((resolve, reject) => {
      if (child.exitCode !== null) return reject(new Error(`${script} has exited`));
      const id = ++next;
      pending.set(id, resolve);
      child.send({ id, cmd, ...extra });
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within ${timeoutMs} ms`)), timeoutMs);
    child.once("exit", (code) => reject(new Error(`${script} exited early (${code})`)));
    child.on("message", (message) => {
      if (!message.ready) return;
      clearTimeout(timer);
      resolve({
        url: message.url,
        pid: child.pid,
        stats: (gc = false) => ask("stats", { gc }),
        async close() {
          if (child.exitCode !== null) return;
          const exited = new Promise((r) => child.once("exit", r));
          await Promise.race([ask("close"), new Promise((r) => setTimeout(r, 10_000))]);
          if (child.exitCode === null) child.kill("SIGKILL");
          await exited;
        },
        kill: () => child.exitCode === null && child.kill("SIGKILL"),
      });
    });
  });
}
