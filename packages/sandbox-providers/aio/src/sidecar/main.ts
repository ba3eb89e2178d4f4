#!/usr/bin/env node
// The sidecar's process: configuration from the environment (the token never appears on a command line).
import { startSidecar } from "./index.js";

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    process.stderr.write(`antler-aio-sidecar: ${name} is not set; the provider sets it when it starts the sidecar.\n`);
    process.exit(2);
  }
  return value;
}

const token = required("ANTLER_RELAY_TOKEN");
const upstream = required("ANTLER_RELAY_UPSTREAM");
let policy: unknown;
try {
  policy = JSON.parse(required("ANTLER_EGRESS_POLICY"));
} catch {
  process.stderr.write("antler-aio-sidecar: ANTLER_EGRESS_POLICY is not JSON.\n");
  process.exit(2);
}
const port = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const log = (event: string, fields: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);

const sidecar = await startSidecar({
  token,
  upstream,
  policy: policy as never,
  host: process.env.ANTLER_SIDECAR_HOST ?? "0.0.0.0",
  proxyPort: port("ANTLER_PROXY_PORT", 3128),
  relayPort: port("ANTLER_RELAY_PORT", 8081),
  ...(process.env.ANTLER_DNS_SERVERS ? { dnsServers: process.env.ANTLER_DNS_SERVERS.split(",") } : {}),
  log,
});
// Cleared so nothing the process spawns or dumps carries it.
delete process.env.ANTLER_RELAY_TOKEN;
log("sidecar_ready", { proxy_port: sidecar.proxyPort, relay_port: sidecar.relayPort });
const stop = () => {
  sidecar.close().then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
