#!/usr/bin/env bash
# End-to-end check of restricted AIO sandboxes on a real Docker host (not run on the development machines, which
# have no Docker engine). Builds the sidecar image, starts one restricted sandbox through the provider, checks that
# an allowed name is reachable and a denied one is refused and recorded, then that teardown leaves no container or
# network behind. Run from the repository root after `pnpm install && pnpm run build`.
set -euo pipefail
docker info >/dev/null
docker build -f packages/sandbox-providers/aio/sidecar/Dockerfile -t antler/aio-sidecar:0.1.0 .
docker pull ghcr.io/agent-infra/sandbox:latest
node --input-type=module <<'JS'
import { createAioProvider } from "./packages/sandbox-providers/aio/dist/index.js";
const provider = createAioProvider({
  backend: "docker",
  mount_thread_data: false,
  network: { mode: "restricted", policy: { label: "e2e", allow: ["pypi.org", "*.pythonhosted.org"], ports: [443] } },
});
const fail = (msg) => { console.error(`FAIL: ${msg}`); process.exitCode = 1; };
try {
  const sandbox = await provider.acquire("e2e-thread", { userId: "e2e" });
  const allowed = await sandbox.executeCommand("curl -sS -o /dev/null -w '%{http_code}' https://pypi.org/simple/ || true");
  console.log("allowed pypi.org ->", allowed.stdout.trim());
  if (!/^(200|301|302)$/.test(allowed.stdout.trim())) fail("pypi.org was not reachable through the proxy");
  const denied = await sandbox.executeCommand("curl -sS -o /dev/null -w '%{http_code}' https://example.com/ 2>&1 || true");
  console.log("denied example.com ->", denied.stdout.trim());
  const direct = await sandbox.executeCommand("curl -sS --noproxy '*' -m 5 https://1.1.1.1/ 2>&1 || echo no-route");
  console.log("direct (bypassing the proxy) ->", direct.stdout.trim().split("\n").pop());
  if (!/no-route|resolve|connect|timed out/i.test(direct.stdout)) fail("the sandbox reached the internet without the proxy");
  const denial = await sandbox.egress?.claimOldestDenial();
  console.log("oldest denial:", denial);
  if (denial?.host !== "example.com") fail("the refusal of example.com was not recorded");
} finally {
  await provider.close();
}
JS
left=$(docker ps -aq --filter label=antler.sandbox=aio; docker network ls -q --filter label=antler.sandbox=aio)
if [ -n "$left" ]; then echo "FAIL: teardown left: $left"; exit 1; fi
echo "OK: restricted sandbox end to end, nothing left behind"
