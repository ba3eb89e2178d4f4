import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { AntlerError, ErrorCodes } from "../errors.js";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Where the config comes from: an explicit path, then `ANTLER_CONFIG`, then `./config.yaml`. An explicit
 * or env path that does not exist is an error; no file at all means embedded defaults (`null`).
 */
export function discoverConfigPath(options: { explicit?: string | undefined; env?: Env; cwd?: string } = {}): string | null {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const chosen = options.explicit ?? (env.ANTLER_CONFIG ? env.ANTLER_CONFIG : undefined);
  if (chosen !== undefined) {
    const abs = resolve(cwd, chosen);
    if (!existsSync(abs) || !statSync(abs).isFile()) {
      const from = options.explicit !== undefined ? "the given path" : "ANTLER_CONFIG";
      throw new AntlerError(ErrorCodes.CONFIG_NOT_FOUND, `config file ${abs} (from ${from}) does not exist`, {
        hint: "Check the path, or omit it to use ./config.yaml or the embedded defaults.",
      });
    }
    return abs;
  }
  const local = resolve(cwd, "config.yaml");
  return existsSync(local) ? local : null;
}
