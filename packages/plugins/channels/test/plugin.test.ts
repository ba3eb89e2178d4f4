import { runPluginConformance } from "@antler/kernel/testing";
import channels from "../src/index.js";

runPluginConformance(channels, {
  validConfig: { default_user: "guest", groups: { reply: "all" } },
  invalidConfigs: [{ groups: { reply: "sometimes" } }, { allow: { users: ["no-provider-prefix"] } }, { stream: { edit_interval_ms: 5 } }],
});
