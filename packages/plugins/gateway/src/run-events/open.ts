import type { Logger } from "@antler/kernel";
import type { AntlerClient } from "@antler/plugin-runtime";
import type { GatewayConfig } from "../config.js";
import { RunEventLog } from "./log.js";
import { openRedisRunEventStore } from "./redis-store.js";
import { createSqlRunEventStore, runEventMigrations } from "./sql-store.js";
import type { RunEventStore } from "./store.js";

/**
 * Opens the run event log `stream_bridge` names (null for `none`) and starts its retention sweep. The caller
 * attaches it to the client (`client.observeRuns(log)`) so every run of the client is logged.
 */
export async function openRunEventLog(client: AntlerClient, config: GatewayConfig, logger: Logger): Promise<RunEventLog | null> {
  const bridge = config.stream_bridge;
  if (bridge.type === "none") return null;
  let store: RunEventStore;
  if (bridge.type === "redis") {
    store = await openRedisRunEventStore({
      url: bridge.redis_url,
      keyPrefix: bridge.key_prefix,
      maxEventsPerRun: config.run_events.max_events_per_run,
      retentionSeconds: Math.max(1, Math.round(config.run_events.retention_hours * 3600)),
    });
  } else {
    // The client's tables first: two handles on one SQLite file must not run their migrations at the same time.
    await client.listThreads({ limit: 1 });
    const database = await client.kernel.openDatabase({ migrations: runEventMigrations });
    store = await createSqlRunEventStore(database, { pollMs: config.run_events.poll_interval_ms });
  }
  const log = new RunEventLog(store, config.run_events, logger);
  log.startSweeper();
  return log;
}
