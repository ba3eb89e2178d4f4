#!/usr/bin/env node
import module from "node:module";

// Node 22.1 and later keep compiled code on disk (in the OS temp folder), so every start after the first skips
// recompiling the CLI's modules; NODE_DISABLE_COMPILE_CACHE=1 turns this off. Older Node has no such call.
module.enableCompileCache?.();
// The CLI sets an exit code and returns; it does not call process.exit, so pending output is flushed. A command
// that has returned is done, though: if something still holds the process (a plugin's timer or socket, a tool that
// ignored its run's abort) 10 s later, it exits anyway, so a stopped server never lingers.
const { main } = await import("../dist/bundle/cli.js");
process.exitCode = await main(process.argv.slice(2));
setTimeout(() => {
  process.stderr.write("antler: the command finished 10 s ago but something still holds the process open; exiting\n");
  process.exit();
}, 10_000).unref();
