import { useTempDirs } from "@antler/kernel/testing";

export const { tempDir, writeFiles } = useTempDirs();
