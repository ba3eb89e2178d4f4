import { describeWithPostgres, usePostgresSchema } from "@antler/kernel/testing";
import { afterEach } from "vitest";
import { cleanups, pagingBackwards } from "./bounded-state-fixtures.js";

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describeWithPostgres("GET /api/threads/{id}/state on PostgreSQL reads the last page of a 1,200-message thread", (url) => {
  const schema = usePostgresSchema(url, { prefix: "antler_gw_bounded" });
  pagingBackwards("postgres", () => ({ backend: "postgres", postgres_url: url, postgres_schema: schema.name }), false);
});
