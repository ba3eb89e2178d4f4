import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { taskRoleSuite } from "./task-role.js";

describeWithPostgres("a scheduled task's authorization role on PostgreSQL", (url) => {
  const schema = usePostgresSchema(url, { prefix: "sched_role" });
  taskRoleSuite(() => ({ backend: "postgres", postgres_url: url, postgres_schema: schema.name }));
});
