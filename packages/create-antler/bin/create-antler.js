#!/usr/bin/env node
// `npm create antler <dir>` runs this. It sets an exit code and returns (no process.exit), so output is flushed.
const { main } = await import("../dist/cli.js");
process.exitCode = await main(process.argv.slice(2));
