// The import graph of every workspace package's `src`, built with the TypeScript compiler's parser. It pins two
// rules from CONVENTIONS.md: no import circle inside a package, and the plugin contract (plugin.ts and what it
// imports) imports nothing above it. Type-only edges count: a circle through `import type` still means the
// contract and its implementation cannot be read, moved or published apart.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const REPO_ROOT = resolve(import.meta.dirname, "../../..");
const KERNEL_DIR = join(REPO_ROOT, "packages/kernel");
const SOURCE_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts"];

/** How one file refers to another. `typeOnly` edges vanish from the emitted JavaScript; `lazy` ones load on first call. */
interface ImportRef {
  readonly specifier: string;
  readonly typeOnly: boolean;
  readonly lazy: boolean;
  readonly line: number;
}

interface Edge {
  readonly to: string;
  readonly ref: ImportRef;
}

interface PackageGraph {
  readonly name: string;
  readonly dir: string;
  /** Absolute file path → its edges to other files of the same `src`. */
  readonly edges: ReadonlyMap<string, readonly Edge[]>;
  /** Absolute file path → every import it makes, including packages. */
  readonly refs: ReadonlyMap<string, readonly ImportRef[]>;
  /** Relative specifiers that matched no file, as "file:line → specifier". */
  readonly unresolved: readonly string[];
}

/** Every import a file makes: static imports and re-exports, `import type`, `import x = require()`, `import()` calls and `import("x").T` types. */
function importsOf(fileName: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const refs: ImportRef[] = [];
  const add = (literal: ts.Node | undefined, typeOnly: boolean, lazy: boolean) => {
    if (!literal || !ts.isStringLiteralLike(literal)) return;
    const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
    refs.push({ specifier: literal.text, typeOnly, lazy, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      // With verbatimModuleSyntax (tsconfig.base.json), only a clause-level `import type` is erased;
      // `import { type A } from "x"` still emits `import {} from "x"`, which loads the module.
      add(node.moduleSpecifier, node.importClause?.isTypeOnly ?? false, false);
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, node.isTypeOnly, false);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly, false);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return refs;
}

function sourceFilesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFilesUnder(path));
    else if (SOURCE_EXTENSIONS.some((ext) => entry.name.endsWith(ext)) && !entry.name.endsWith(".d.ts")) files.push(path);
  }
  return files;
}

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** NodeNext resolution of a relative specifier onto TypeScript sources: `./x.js` → `./x.ts`, `./dir` → `./dir/index.ts`. */
function resolveRelative(fromFile: string, specifier: string): string | undefined {
  const target = resolve(dirname(fromFile), specifier);
  const candidates = [target];
  const swap: Record<string, string[]> = { ".js": [".ts", ".tsx"], ".jsx": [".tsx"], ".mjs": [".mts"], ".cjs": [".cts"] };
  for (const [js, tsExts] of Object.entries(swap)) {
    if (target.endsWith(js)) candidates.push(...tsExts.map((ext) => target.slice(0, -js.length) + ext));
  }
  candidates.push(...SOURCE_EXTENSIONS.map((ext) => target + ext), ...SOURCE_EXTENSIONS.map((ext) => join(target, `index${ext}`)));
  return candidates.find(isFile);
}

/** A self-reference (`@antler/kernel/testing` from inside the kernel) resolves through the package's source export. */
function resolveSelf(pkg: { name: string; dir: string; exports?: unknown }, specifier: string): string | undefined {
  if (specifier !== pkg.name && !specifier.startsWith(`${pkg.name}/`)) return undefined;
  const subpath = `.${specifier.slice(pkg.name.length)}`;
  const entry = (pkg.exports as Record<string, unknown> | undefined)?.[subpath];
  const source = typeof entry === "object" && entry !== null ? (entry as Record<string, unknown>)["antler:source"] : undefined;
  return typeof source === "string" ? resolve(pkg.dir, source) : undefined;
}

function buildPackageGraph(dir: string): PackageGraph {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name: string; exports?: unknown };
  const files = sourceFilesUnder(join(dir, "src"));
  const known = new Set(files);
  const edges = new Map<string, Edge[]>();
  const refs = new Map<string, ImportRef[]>();
  const unresolved: string[] = [];
  for (const file of files) {
    const fileRefs = importsOf(file, readFileSync(file, "utf8"));
    refs.set(file, fileRefs);
    const out: Edge[] = [];
    for (const ref of fileRefs) {
      const relativeSpecifier = ref.specifier.startsWith("./") || ref.specifier.startsWith("../");
      const target = relativeSpecifier ? resolveRelative(file, ref.specifier) : resolveSelf({ ...manifest, dir }, ref.specifier);
      if (relativeSpecifier && !target) unresolved.push(`${relative(dir, file)}:${ref.line} → ${ref.specifier}`);
      if (target && known.has(target)) out.push({ to: target, ref });
    }
    edges.set(file, out);
  }
  return { name: manifest.name, dir, edges, refs, unresolved };
}

/** The kernel and every package one level inside a family folder (plugins, sandbox providers, community tools, ...). */
function workspacePackageDirs(): string[] {
  const packagesDir = join(REPO_ROOT, "packages");
  const isPackage = (dir: string) => isFile(join(dir, "package.json")) && existsSync(join(dir, "src"));
  const dirs: string[] = [];
  for (const entry of readdirSync(packagesDir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === "node_modules") continue;
    const dir = join(packagesDir, entry.name);
    if (isPackage(dir)) {
      dirs.push(dir);
      continue;
    }
    for (const child of readdirSync(dir, { withFileTypes: true })) {
      if (child.isDirectory() && isPackage(join(dir, child.name))) dirs.push(join(dir, child.name));
    }
  }
  return dirs.sort();
}

/** Tarjan's strongly connected components. Returns the components that hold a circle: two or more nodes, or a node importing itself. */
function findCircularComponents(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return components.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

/** The shortest circle from `start` back to itself, staying inside `members` (breadth-first). */
function shortestCircle(graph: ReadonlyMap<string, readonly string[]>, members: ReadonlySet<string>, start: string): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== start && at !== undefined; at = parent.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!parent.has(next)) {
        parent.set(next, node);
        queue.push(next);
      }
    }
  }
  return [];
}

/**
 * One readable chain per distinct circle: the shortest circle through each member of each component, rotated to
 * start at its first file in sort order so that the same circle found from two members is listed once.
 */
function describeCircles(
  graph: ReadonlyMap<string, readonly string[]>,
  label: (node: string) => string = (node) => node,
  arrow: (from: string, to: string) => string = () => " → ",
): string[] {
  const chains = new Set<string>();
  for (const component of findCircularComponents(graph)) {
    const members = new Set(component);
    for (const start of component) {
      const circle = shortestCircle(graph, members, start).slice(0, -1);
      const first = circle.indexOf([...circle].sort()[0]!);
      const rotated = [...circle.slice(first), ...circle.slice(0, first)];
      const closed = [...rotated, rotated[0]!];
      chains.add(closed.map((node, i) => (i === 0 ? label(node) : `${arrow(closed[i - 1]!, node)}${label(node)}`)).join(""));
    }
  }
  return [...chains];
}

const adjacency = (graph: PackageGraph) => new Map([...graph.edges].map(([file, out]) => [file, [...new Set(out.map((e) => e.to))]]));

/** How `from` refers to `to` in a chain: a plain arrow for an import that loads the file, annotated otherwise. */
function arrowFor(graph: PackageGraph) {
  return (from: string, to: string): string => {
    const refs = (graph.edges.get(from) ?? []).filter((e) => e.to === to).map((e) => e.ref);
    if (refs.some((r) => !r.typeOnly && !r.lazy)) return " → ";
    if (refs.some((r) => r.lazy)) return " →(import()) ";
    return " →(type) ";
  };
}

/** `a → b →(type) c`: a chain of files with the kind of each import between them. */
function formatChain(graph: PackageGraph, chain: readonly string[]): string {
  const arrow = arrowFor(graph);
  return chain.map((file, i) => (i === 0 ? "" : arrow(chain[i - 1]!, file)) + relative(graph.dir, file)).join("");
}

/** The circles of one package as chains, and a heading that names each component and its size. */
function circleReport(graph: PackageGraph): { heading: string; chains: string[] } {
  const label = (file: string) => relative(graph.dir, file);
  const components = findCircularComponents(adjacency(graph));
  const sizes = components.map((c) => `${c.length} files (${c.map(label).join(", ")})`).join("; ");
  return {
    heading: `${graph.name} has ${components.length} import circle(s), type-only imports included: ${sizes}. Each chain is the shortest circle through one of their files; "→(type)" marks an import type / import("x").T edge`,
    chains: describeCircles(adjacency(graph), label, arrowFor(graph)),
  };
}

const isLangChain = (specifier: string) =>
  specifier === "langchain" || specifier.startsWith("langchain/") || specifier.startsWith("@langchain/");

/** Breadth-first from `root` over every edge kind; returns each reached file with the chain that reached it. */
function reachableWithChains(graph: PackageGraph, root: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[root, [root]]]);
  const queue = [root];
  for (let head = 0; head < queue.length; head++) {
    const file = queue[head]!;
    for (const edge of graph.edges.get(file) ?? []) {
      if (chains.has(edge.to)) continue;
      chains.set(edge.to, [...chains.get(file)!, edge.to]);
      queue.push(edge.to);
    }
  }
  return chains;
}

const graphs = workspacePackageDirs().map(buildPackageGraph);

describe("the import-circle finder", () => {
  const graph = new Map<string, string[]>([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a", "d"]],
    ["d", ["e"]],
    ["e", ["d"]],
    ["f", ["f"]],
    ["g", ["a"]],
  ]);

  it("finds each strongly connected component with a circle, including a file that imports itself", () => {
    expect(findCircularComponents(graph)).toEqual([["a", "b", "c"], ["d", "e"], ["f"]]);
  });

  it("describes each circle as a chain that ends where it starts", () => {
    expect(describeCircles(graph)).toEqual(["a → b → c → a", "d → e → d", "f → f"]);
  });

  it("finds nothing in an acyclic graph with shared dependencies", () => {
    const diamond = new Map([
      ["top", ["left", "right"]],
      ["left", ["bottom"]],
      ["right", ["bottom"]],
      ["bottom", []],
    ]);
    expect(findCircularComponents(diamond)).toEqual([]);
  });

  it("reads static, type-only, re-exported, dynamic and type-query imports", () => {
    const text = [
      'import { a } from "./a.js";',
      'import type { B } from "./b.js";',
      'import { type C } from "./c.js";',
      'export * from "./d.js";',
      'export type { E } from "./e.js";',
      'const f = () => import("./f.js");',
      'let g: import("./g.js").G;',
    ].join("\n");
    expect(importsOf("x.ts", text).map(({ specifier, typeOnly, lazy }) => ({ specifier, typeOnly, lazy }))).toEqual([
      { specifier: "./a.js", typeOnly: false, lazy: false },
      { specifier: "./b.js", typeOnly: true, lazy: false },
      { specifier: "./c.js", typeOnly: false, lazy: false },
      { specifier: "./d.js", typeOnly: false, lazy: false },
      { specifier: "./e.js", typeOnly: true, lazy: false },
      { specifier: "./f.js", typeOnly: false, lazy: true },
      { specifier: "./g.js", typeOnly: true, lazy: false },
    ]);
  });
});

describe("workspace import graph", () => {
  it("discovers the kernel and the plugin packages from the file system", () => {
    const names = graphs.map((g) => g.name);
    expect(names).toContain("@antler/kernel");
    expect(names.length).toBeGreaterThan(1);
  });

  // A relative import the graph cannot resolve would silently drop an edge and could hide a circle.
  it.each(graphs.map((g) => [g.name, g] as const))("resolves every relative import in %s", (_name, graph) => {
    expect(graph.unresolved).toEqual([]);
  });

  it.each(graphs.map((g) => [g.name, g] as const))("has no import circle in %s", (_name, graph) => {
    const { heading, chains } = circleReport(graph);
    expect(chains, heading).toEqual([]);
  });
});

describe("the plugin contract of @antler/kernel", () => {
  const kernel = graphs.find((g) => g.dir === KERNEL_DIR)!;
  const contractRoot = join(KERNEL_DIR, "src/plugin.ts");
  const label = (file: string) => relative(KERNEL_DIR, file);
  const contract = reachableWithChains(kernel, contractRoot);

  it("is rooted at src/plugin.ts", () => {
    expect(kernel.edges.has(contractRoot)).toBe(true);
  });

  it("does not import the kernel implementation (src/kernel.ts), not even for types", () => {
    const chain = contract.get(join(KERNEL_DIR, "src/kernel.ts"));
    expect(chain && formatChain(kernel, chain), "the plugin contract reaches src/kernel.ts through this chain").toBeUndefined();
  });

  it("imports no file that loads LangChain at runtime (type-only imports of @langchain are fine)", () => {
    const offenders: string[] = [];
    for (const [file, chain] of contract) {
      for (const ref of kernel.refs.get(file) ?? []) {
        if (!ref.typeOnly && isLangChain(ref.specifier)) {
          offenders.push(
            `${label(file)}:${ref.line} loads "${ref.specifier}" (${ref.lazy ? "import()" : "import"}), reached by ${formatChain(kernel, chain)}`,
          );
        }
      }
    }
    expect(offenders, "files of the plugin contract (src/plugin.ts and everything it imports) that load LangChain at runtime").toEqual([]);
  });
});
