import { MemoryMessageLog } from "../src/index.js";
import { runMessageLogConformance } from "../src/testing/index.js";

runMessageLogConformance("MemoryMessageLog", async () => new MemoryMessageLog());
