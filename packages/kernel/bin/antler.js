#!/usr/bin/env node
import module from "node:module";

// Node 22.1 and later keep compiled code on disk (in the OS temp folder), so every start after the first skips
// recompiling the CLI's modules; NODE_DISABLE_COMPILE_CACHE=1 turns this off. Older Node has no such call.
module.enableCompileCache?.();
// The CLI sets an exit code and returns; it never calls process.exit, so pending output is flushed.
const { main } = await import("../dist/bundle/cli.js");
process.exitCode = await main(process.argv.slice(2));
