import { runSandboxConformance } from "@antler/kernel/testing";
import { createAioProvider } from "../src/index.js";
import { FakeAioServer } from "./fake-aio-server.js";

// The whole contract through real HTTP: provider → loopback provisioner → loopback AIO API → real files and bash.
let server: FakeAioServer | undefined;

runSandboxConformance({
  name: "aio (loopback provisioner)",
  create: async () => {
    server = await FakeAioServer.start({ provisionerApiKey: "conformance-key" });
    const provider = createAioProvider(
      { provisioner_url: server.url, provisioner_api_key: "conformance-key", acquire_timeout_seconds: 10 },
      { pollIntervalMs: 20 },
    );
    return { provider };
  },
  close: async () => {
    await server?.close();
    server = undefined;
  },
});
