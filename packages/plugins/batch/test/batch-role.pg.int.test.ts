import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { batchRoleSuite } from "./batch-role.js";

describeWithPostgres("a batch's authorization role on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "batch_role" });
  batchRoleSuite(() => ({ storage: { backend: "postgres", postgres_url: url }, schema: schema.name }));
});
