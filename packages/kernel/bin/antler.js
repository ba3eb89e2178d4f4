#!/usr/bin/env node
// The CLI sets an exit code and returns; it never calls process.exit, so pending output is flushed.
const { main } = await import("../dist/bundle/cli.js");
process.exitCode = await main(process.argv.slice(2));
