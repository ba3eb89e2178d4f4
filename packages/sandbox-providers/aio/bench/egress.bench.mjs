// Egress proxy benchmark: requests through the sidecar's proxy against direct connections to the same loopback
// server, measured in the same run. Prints ratios; fails with a message (never hangs) after 120 s.
import { existsSync } from "node:fs";
import { createServer, request } from "node:http";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../dist/sidecar/index.js", import.meta.url));
if (!existsSync(entry)) {
  console.error(`egress bench: ${entry} is missing; run \`pnpm run build\` first.`);
  process.exit(1);
}
const guard = setTimeout(() => {
  console.error("egress bench: did not finish within 120 s");
  process.exit(1);
}, 120_000);
const { startSidecar } = await import(entry);

// BENCH_SMOKE=1: a few requests of each kind, to check it still runs (the figures mean nothing).
const SMOKE = process.env.BENCH_SMOKE === "1";
const WARMUP = SMOKE ? 5 : 50;
const LATENCY_REQUESTS = SMOKE ? 20 : 400;
const THROUGHPUT_REQUESTS = SMOKE ? 64 : 2000;
const BULK_ROUNDS = SMOKE ? 2 : 10;
const SMALL = Buffer.from("ok");
const BIG = Buffer.alloc(8 * 1024 * 1024, 7);
const site = createServer((req, res) => res.end(req.url === "/big" ? BIG : SMALL));
await new Promise((r) => site.listen(0, "127.0.0.1", r));
const port = site.address().port;
const sidecar = await startSidecar({
  token: "bench-token-0123456789abcdef",
  upstream: "http://127.0.0.1:1",
  host: "127.0.0.1",
  proxyPort: 0,
  relayPort: 0,
  policy: { label: "bench", allow: ["site.bench"], ports: [port], allow_private_cidrs: ["127.0.0.0/8"] },
  resolve: async () => ["127.0.0.1"],
});

/** One GET on a fresh connection (the proxy serves one request per connection), resolved with bytes read. */
function get(viaProxy, path) {
  return new Promise((resolve, reject) => {
    const options = viaProxy
      ? {
          host: "127.0.0.1",
          port: sidecar.proxyPort,
          path: `http://site.bench:${port}${path}`,
          headers: { host: `site.bench:${port}` },
          agent: false,
        }
      : { host: "127.0.0.1", port, path, agent: false };
    const req = request(options, (res) => {
      let n = 0;
      res.on("data", (c) => {
        n += c.length;
      });
      res.on("end", () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

async function latency(viaProxy, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await get(viaProxy, "/");
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(n / 2)], p95: times[Math.floor(n * 0.95)] };
}

async function throughput(viaProxy, total, concurrency) {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await get(viaProxy, "/");
      }
    }),
  );
  return total / ((performance.now() - t) / 1000);
}

async function bulk(viaProxy, rounds) {
  const t = performance.now();
  let bytes = 0;
  for (let i = 0; i < rounds; i++) bytes += await get(viaProxy, "/big");
  return bytes / (1024 * 1024) / ((performance.now() - t) / 1000);
}

await latency(false, WARMUP);
await latency(true, WARMUP);
const directLat = await latency(false, LATENCY_REQUESTS);
const proxyLat = await latency(true, LATENCY_REQUESTS);
const directRps = await throughput(false, THROUGHPUT_REQUESTS, 16);
const proxyRps = await throughput(true, THROUGHPUT_REQUESTS, 16);
const directMb = await bulk(false, BULK_ROUNDS);
const proxyMb = await bulk(true, BULK_ROUNDS);

const f = (x) => x.toFixed(3);
console.log("egress proxy on loopback (baseline: direct connection, same run)");
console.log(
  `  latency p50   direct ${f(directLat.p50)} ms   proxy ${f(proxyLat.p50)} ms   added ${f(proxyLat.p50 - directLat.p50)} ms   ratio ${(proxyLat.p50 / directLat.p50).toFixed(2)}x`,
);
console.log(
  `  latency p95   direct ${f(directLat.p95)} ms   proxy ${f(proxyLat.p95)} ms   added ${f(proxyLat.p95 - directLat.p95)} ms   ratio ${(proxyLat.p95 / directLat.p95).toFixed(2)}x`,
);
console.log(
  `  requests/s (16 concurrent, new connection each)   direct ${directRps.toFixed(0)}   proxy ${proxyRps.toFixed(0)}   ratio ${(proxyRps / directRps).toFixed(2)}x`,
);
console.log(
  `  bulk MiB/s (8 MiB bodies)   direct ${directMb.toFixed(0)}   proxy ${proxyMb.toFixed(0)}   ratio ${(proxyMb / directMb).toFixed(2)}x`,
);

await sidecar.close();
site.closeAllConnections();
site.close();
clearTimeout(guard);
