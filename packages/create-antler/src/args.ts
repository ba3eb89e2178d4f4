import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";

export const CREATE_USAGE =
  "npm create antler <dir> [-- --name <package-name>] [--no-install] [--package-manager npm|pnpm] [--from-tarballs <dir>]";

export const PACKAGE_MANAGERS = ["npm", "pnpm"] as const;
export type PackageManager = (typeof PACKAGE_MANAGERS)[number];

/** The environment variable that stands in for `--from-tarballs` (the option wins when both are given). */
export const TARBALLS_ENV = "CREATE_ANTLER_TARBALLS";

export const CREATE_HELP = `create-antler: scaffold an Antler distribution that runs offline as generated.

Usage: ${CREATE_USAGE}
   or: create-antler <dir> [options]   (pnpm create antler <dir> [options] passes options without "--")

Writes into <dir> (created if missing; refused if it exists and is not empty):
  config.yaml              the distribution: an offline scripted model, a tool group, two local plugins
  agents/converter/        a custom agent (config.yaml and SOUL.md)
  plugins/units/           a local plugin with one tool (convert_units)
  plugins/offline-model.js the scripted model that answers offline, until you point models: at a real one
  test/                    vitest tests: the plugin conformance suite and a real turn with the agent
  package.json, README.md, vitest.config.js, .gitignore

Options:
  --name <package-name>            the package name (default: the folder's name)
  --no-install                     write the files only; do not run the package manager's install
  --package-manager <npm|pnpm>     install and print commands with this one (default: the one running this)
  --from-tarballs <dir>            depend on the @antler/*.tgz files in <dir> (file: specs), e.g. from pnpm pack;
                                   also read from $${TARBALLS_ENV}
  -h, --help                       print this help

Exit codes: 0 created, 1 the install failed (the files are written), 2 bad input (nothing written).`;

export interface CreateOptions {
  /** The project folder, absolute. */
  dir: string;
  /** The npm package name of the project. */
  name: string;
  install: boolean;
  packageManager: PackageManager;
  /** A folder of packed `@antler/*` tarballs to depend on instead of registry versions, absolute. */
  fromTarballs?: string;
}

export type ParsedCreateArgs =
  | { readonly kind: "help" }
  | { readonly kind: "create"; readonly options: CreateOptions }
  | { readonly kind: "error"; readonly message: string };

// npm's rules for a package name: lowercase, URL-safe, at most 214 characters, an optional @scope/.
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** Why `name` cannot be an npm package name, or null when it can. */
export function invalidPackageName(name: string): string | null {
  if (name.length > 214) return "it is longer than 214 characters";
  if (!NPM_NAME.test(name)) {
    return "a package name is lowercase letters, digits, '-', '.', '_' and '~', optionally under an @scope/, with no spaces";
  }
  if (["node_modules", "favicon.ico"].includes(name)) return "npm reserves that name";
  return null;
}

/** A package name close to `text`, to suggest when `text` is not one: `My App` → `my-app`. */
export function suggestPackageName(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9._~-]+/g, "-")
      .replace(/^[-._~]+|-+$/g, "")
      .slice(0, 214) || "my-antler-app"
  );
}

/** The package manager that started this process, from `npm_config_user_agent` ("pnpm/10.34.9 npm/? node/v20..."). */
export function invokingPackageManager(userAgent: string | undefined): PackageManager {
  return userAgent?.startsWith("pnpm/") ? "pnpm" : "npm";
}

/**
 * Reads the command line of `create-antler`. Checks only what the arguments themselves say; the file system
 * (an existing folder, the tarballs) is checked by `checkTarget` and `findTarballs`.
 */
export function parseCreateArgs(
  argv: readonly string[],
  context: { cwd: string; env: Readonly<Record<string, string | undefined>> },
): ParsedCreateArgs {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    return { kind: "error", message: `${(error as Error).message.replace(/\.$/, "")}.\nUsage: ${CREATE_USAGE} (--help for more)` };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };
  if (positionals.length === 0) {
    return { kind: "error", message: `give the folder to create the project in, e.g. npm create antler my-app\nUsage: ${CREATE_USAGE}` };
  }
  if (positionals.length > 1) {
    return {
      kind: "error",
      message: `give one folder, not ${positionals.length} (${positionals.map((p) => JSON.stringify(p)).join(", ")}); quote a path that has spaces.\nUsage: ${CREATE_USAGE}`,
    };
  }
  const target = positionals[0] as string;
  if (target.trim() === "") return { kind: "error", message: "the folder name is empty; give one, e.g. npm create antler my-app" };

  const manager = values["package-manager"];
  if (manager !== undefined && !(PACKAGE_MANAGERS as readonly string[]).includes(manager)) {
    return { kind: "error", message: `--package-manager must be npm or pnpm, not ${JSON.stringify(manager)}.` };
  }

  const dir = resolve(context.cwd, target);
  const name = values.name ?? basename(dir);
  const invalid = invalidPackageName(name);
  if (invalid) {
    const suggestion = suggestPackageName(name);
    return {
      kind: "error",
      message:
        values.name === undefined
          ? `the folder name ${JSON.stringify(name)} is not a valid npm package name (${invalid}); pass one with --name, e.g. --name ${suggestion}`
          : `--name ${JSON.stringify(name)} is not a valid npm package name (${invalid}); e.g. --name ${suggestion}`,
    };
  }

  const tarballs = values["from-tarballs"] ?? (context.env[TARBALLS_ENV] || undefined);
  if (values["from-tarballs"] !== undefined && values["from-tarballs"].trim() === "") {
    return { kind: "error", message: "--from-tarballs needs a folder, e.g. --from-tarballs ./antler-packs" };
  }
  return {
    kind: "create",
    options: {
      dir,
      name,
      install: values["no-install"] !== true,
      packageManager: (manager as PackageManager | undefined) ?? invokingPackageManager(context.env.npm_config_user_agent),
      ...(tarballs !== undefined ? { fromTarballs: resolve(context.cwd, tarballs) } : {}),
    },
  };
}

function parseOptions(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      name: { type: "string" },
      // Node 20's parseArgs has no negated booleans: `--no-install` is an option of its own.
      "no-install": { type: "boolean" },
      "package-manager": { type: "string" },
      "from-tarballs": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: true,
  });
}
