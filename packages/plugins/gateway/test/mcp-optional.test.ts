// `@antler/plugin-mcp` is the gateway's optional peer: a gateway installed without it must load. Pinned on the built
// JavaScript a user installs (dist/), from every entry in package.json's exports: following only static imports and
// re-exports (those Node loads before any code runs), no module reaches the package; only an import() call does.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describeUnless } from "@antler/kernel/testing";
import ts from "typescript";
import { expect, it } from "vitest";

const PACKAGE_DIR = resolve(import.meta.dirname, "..");
const MCP = "@antler/plugin-mcp";

interface ModuleImports {
  readonly eager: string[];
  readonly lazy: string[];
}

/** The specifiers a built module imports: `import … from` / `export … from` (eager) and `import()` calls (lazy). */
function importsOf(file: string): ModuleImports {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: ModuleImports = { eager: [], lazy: [] };
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.eager.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      if (specifier && ts.isStringLiteralLike(specifier)) found.lazy.push(specifier.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every built module loaded eagerly from `entries`, with the package specifiers each imports eagerly. */
function eagerGraph(entries: readonly string[]): Map<string, ModuleImports> {
  const graph = new Map<string, ModuleImports>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (graph.has(file)) continue;
    const imports = importsOf(file);
    graph.set(file, imports);
    for (const specifier of imports.eager) if (specifier.startsWith(".")) queue.push(resolve(dirname(file), specifier));
  }
  return graph;
}

const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as {
  exports: Record<string, string | { default?: string }>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  dependencies?: Record<string, string>;
};
const entries = Object.values(manifest.exports)
  .map((entry) => (typeof entry === "string" ? undefined : entry.default))
  .filter((path): path is string => path?.endsWith(".js") === true)
  .map((path) => join(PACKAGE_DIR, path));
const unbuilt = entries.filter((file) => !existsSync(file));

describeUnless(
  "the gateway without @antler/plugin-mcp",
  unbuilt.length > 0
    ? `${unbuilt.map((f) => relative(PACKAGE_DIR, f)).join(", ")} not built; run \`pnpm --filter @antler/plugin-gateway run build\``
    : undefined,
  () => {
    it("declares @antler/plugin-mcp as an optional peer, not a dependency", () => {
      expect(manifest.dependencies?.[MCP]).toBeUndefined();
      expect(manifest.peerDependencies?.[MCP]).toBeDefined();
      expect(manifest.peerDependenciesMeta?.[MCP]).toEqual({ optional: true });
    });

    it("imports @antler/plugin-mcp from no module its entries load eagerly; only an import() reaches it", () => {
      const graph = eagerGraph(entries);
      // The walk saw the gateway: the entries, the app and the server, not an empty graph.
      expect([...graph.keys()].map((f) => relative(PACKAGE_DIR, f))).toEqual(
        expect.arrayContaining(["dist/index.js", "dist/app.js", "dist/server.js"]),
      );
      const eagerMcp = [...graph].filter(([, imports]) => imports.eager.some((s) => s === MCP || s.startsWith(`${MCP}/`)));
      expect(eagerMcp.map(([file]) => relative(PACKAGE_DIR, file))).toEqual([]);

      // The MCP admin module itself imports the package, and the eager graph reaches that module only lazily.
      const mcpModule = join(PACKAGE_DIR, "dist/mcp.js");
      expect(importsOf(mcpModule).eager).toContain(MCP);
      expect(graph.has(mcpModule)).toBe(false);
      expect([...graph.values()].some((imports) => imports.lazy.includes("./mcp.js"))).toBe(true);
    });
  },
);
