import { useTempDirs } from "../src/testing/index.js";

export const { tempDir, writeFiles } = useTempDirs();
