import { describe } from "vitest";
import { taskRoleSuite } from "./task-role.js";

describe("a scheduled task's authorization role on SQLite", () => {
  taskRoleSuite(() => ({ backend: "sqlite" }));
});
