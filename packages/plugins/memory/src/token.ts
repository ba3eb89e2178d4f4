import { createToken } from "@antler/kernel";
import type { MemoryService } from "./service.js";

/** The kernel's memory service: `kernel.scope.resolve(MEMORY)`. Bound by `@antler/plugin-memory`. */
export const MEMORY = createToken<MemoryService>("plugin-memory.service");
