import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { runMessageLogConformance } from "@antler/storage-kit/testing";
import type pg from "pg";
import { messageLogDdl, PostgresMessageLog } from "../src/message-log.js";
import { createPostgresPool } from "../src/postgres.js";

describeWithPostgres("PostgresMessageLog", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_pg_msglog", scope: "all" });

  runMessageLogConformance("PostgresMessageLog (two pools on one schema)", async () => {
    const pools: pg.Pool[] = [];
    const open = () => {
      const pool = createPostgresPool(url, { max: 4 });
      pools.push(pool);
      return new PostgresMessageLog(pool, { schema: schema.name });
    };
    const log = open();
    await pools[0]?.query(messageLogDdl(schema.name));
    return {
      log,
      another: async () => open(),
      close: async () => {
        await Promise.all(pools.map((pool) => pool.end()));
      },
    };
  });
});
