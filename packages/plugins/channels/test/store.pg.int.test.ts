import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { channelStoreSuite } from "./store-suite.js";

describeWithPostgres("the channel journal on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "channels" });
  channelStoreSuite(() => ({ backend: "postgres", postgres_url: url, postgres_schema: schema.name }));
});
