// `pnpm api:check` / `pnpm api:update`: the public API of every published package, pinned by a checked-in report
// (<package>/api-report.md) made from the built declarations (the `types` target of each `exports` entry).
//
// Why not API Extractor: it builds one TypeScript program per entry point, and this workspace has about a hundred
// entry points, so a full check took minutes on two cores. Here one program holds every entry point and only the
// binder and symbol lookups run (no type check), which takes seconds. What a report holds, per entry point: every
// export with its declaration as the .d.ts states it (comments dropped, printed by TypeScript's printer so layout
// does not matter), and every declaration of the same package that an export reaches without it being exported
// (a changed option type breaks callers as surely as a changed signature). Types from other packages appear by name;
// their own reports pin them.
//
// Usage: node scripts/api-report.mjs check|update [--root DIR] [--filter NAME]. Run after a build.
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { publishedPackages } from "./workspace-packages.mjs";

export const REPORT_FILE = "api-report.md";

/** One report text per package: `{ pkg, path, text }`. Throws when a package's declarations are missing. */
export function buildReports(root, { filter } = {}) {
  const packages = publishedPackages(root).filter((p) => !filter || p.name === filter);
  const entries = [];
  const missing = [];
  for (const pkg of packages) {
    for (const [subpath, types] of typesEntries(pkg.manifest)) {
      const file = resolve(pkg.dir, types);
      if (existsSync(file)) entries.push({ pkg, subpath, file: realpathSync(file) });
      else missing.push(`${pkg.name} "${subpath}": ${relative(root, file)}`);
    }
  }
  if (missing.length > 0) {
    throw new Error(`declarations missing (run \`pnpm build\` first):\n  ${missing.join("\n  ")}`);
  }
  const owners = publishedPackages(root).map((p) => ({ pkg: p, dir: realpathSync(p.dir) + sep }));
  const ownerOf = (fileName) => owners.find((o) => fileName.startsWith(o.dir))?.pkg.name;
  const options = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
    // Nothing is type-checked, and a report names the standard library's types without expanding them.
    noLib: true,
    types: [],
  };
  // Declarations outside the workspace's own packages (LangChain, zod, Node's types) are never parsed: the reports
  // name such types without expanding them, and parsing them was most of the run time.
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    if (!ownerOf(realpathOrSelf(fileName))) return ts.createSourceFile(fileName, "export {};", languageVersion);
    return getSourceFile(fileName, languageVersion, ...rest);
  };
  const program = ts.createProgram({ rootNames: entries.map((e) => e.file), options, host });
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

  return packages.map((pkg) => {
    const sections = entries.filter((e) => e.pkg === pkg).map((e) => entrySection(e, { program, checker, printer, ownerOf }));
    const text = [
      `# API report: ${pkg.name}`,
      "",
      "Made by `pnpm api:update` from the built declarations; `pnpm api:check` fails when the package's API differs from it.",
      "Do not edit by hand. A change here is a change for users: add a changeset (`pnpm changeset`) that says so.",
      "",
      ...sections,
    ].join("\n");
    return { pkg, path: join(pkg.dir, REPORT_FILE), text };
  });
}

/** `[subpath, types file]` for each `exports` entry with a `types` condition (./package.json and the like have none). */
function typesEntries(manifest) {
  const exp = manifest.exports;
  if (exp == null) return manifest.types ? [[".", manifest.types]] : [];
  if (typeof exp === "string") return manifest.types ? [[".", manifest.types]] : [];
  const isConditions = Object.keys(exp).every((k) => !k.startsWith("."));
  const map = isConditions ? { ".": exp } : exp;
  const out = [];
  for (const [subpath, target] of Object.entries(map)) {
    const types = findTypes(target);
    if (types) out.push([subpath, types]);
  }
  return out;
}

function findTypes(target) {
  if (target == null || typeof target === "string") return undefined;
  if (Array.isArray(target)) return target.map(findTypes).find(Boolean);
  if (typeof target.types === "string") return target.types;
  for (const [key, value] of Object.entries(target)) {
    if (key !== "types" && typeof value === "object") {
      const nested = findTypes(value);
      if (nested) return nested;
    }
  }
  return undefined;
}

function entrySection({ pkg, subpath, file }, ctx) {
  const { program, checker, ownerOf } = ctx;
  const source = program.getSourceFile(file);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  const lines = [`## \`${subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`}\``, "", "```ts"];
  if (!moduleSymbol) {
    lines.push("// (no exports)", "```", "");
    return lines.join("\n");
  }
  const exported = checker
    .getExportsOfModule(moduleSymbol)
    .map((s) => ({ name: s.escapedName.toString(), target: resolveAlias(checker, s) }))
    .sort((a, b) => compareNames(a.name, b.name));
  const exportedTargets = new Set(exported.map((e) => e.target));
  const reachable = new Map(); // symbol -> name
  const queue = [];
  const visitRefs = (node) =>
    collectReferences(node, checker, (sym) => {
      if (exportedTargets.has(sym) || reachable.has(sym)) return;
      const decl = sym.declarations?.[0];
      if (!decl || ownerOf(decl.getSourceFile().fileName) !== pkg.name) return;
      reachable.set(sym, sym.escapedName.toString());
      queue.push(sym);
    });

  for (const { name, target } of exported) {
    const decls = target.declarations ?? [];
    const home = decls[0] && ownerOf(decls[0].getSourceFile().fileName);
    if (decls.length === 0 || !home) {
      lines.push(`export { ${name} } from "${externalSource(checker, moduleSymbol, name, decls[0])}";`);
    } else if (home !== pkg.name) {
      lines.push(`export { ${name} } from "${home}";`);
    } else {
      for (const decl of decls) {
        lines.push(declarationText(decl, name, ctx));
        visitRefs(decl);
      }
    }
  }
  while (queue.length > 0) {
    const sym = queue.shift();
    for (const decl of sym.declarations ?? []) visitRefs(decl);
  }
  if (reachable.size > 0) {
    lines.push("", "// Not exported, but reachable from the exports above:");
    const internal = [...reachable.keys()].sort((a, b) => compareNames(reachable.get(a), reachable.get(b)));
    for (const sym of internal) {
      for (const decl of sym.declarations ?? []) lines.push(declarationText(decl, undefined, ctx));
    }
  }
  lines.push("```", "");
  return lines.join("\n");
}

function realpathOrSelf(fileName) {
  try {
    return realpathSync(fileName);
  } catch {
    return fileName;
  }
}

function resolveAlias(checker, symbol) {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

function compareNames(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The declaration with its unions' members and its type literals' properties in a stable (sorted) order. tsc
 * writes an inferred type (a zod schema's, say) with members in the order they were created in that compilation,
 * which a change in another package can shift; the API is the same, so the report must be too.
 */
function canonical(decl, printer) {
  const sf = decl.getSourceFile();
  const keyOf = (node) => printer.printNode(ts.EmitHint.Unspecified, node, sf);
  const nameOf = (member) => (member.name ? keyOf(member.name).replace(/^["']|["']$/g, "") : "");
  const transformer = (context) => {
    const visit = (node) => {
      const visited = ts.visitEachChild(node, visit, context);
      if (ts.isUnionTypeNode(visited)) {
        const types = [...visited.types].sort((a, b) => compare(keyOf(a), keyOf(b)));
        return ts.factory.updateUnionTypeNode(visited, ts.factory.createNodeArray(types));
      }
      if (ts.isTypeLiteralNode(visited) && visited.members.every((m) => ts.isPropertySignature(m))) {
        const members = [...visited.members].sort((a, b) => compare(nameOf(a), nameOf(b)));
        return ts.factory.updateTypeLiteralNode(visited, ts.factory.createNodeArray(members));
      }
      return visited;
    };
    return (root) => ts.visitNode(root, visit);
  };
  const result = ts.transform(decl, [transformer]);
  const node = result.transformed[0];
  result.dispose();
  return node;
}

const compare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** The declaration as TypeScript prints it, without `export`/`declare`/`default`, renamed when exported as another name. */
function declarationText(decl, exportName, { printer }) {
  const sf = decl.getSourceFile();
  let text;
  let declName;
  if (ts.isSourceFile(decl)) {
    text = `namespace ${exportName} { /* module ${relative(process.cwd(), decl.fileName)} */ }`;
  } else if (ts.isVariableDeclaration(decl)) {
    const list = decl.parent;
    const kind = list.flags & ts.NodeFlags.Const ? "const" : list.flags & ts.NodeFlags.Let ? "let" : "var";
    text = `${kind} ${printer.printNode(ts.EmitHint.Unspecified, canonical(decl, printer), sf)};`;
    declName = decl.name.getText(sf);
  } else {
    text = printer.printNode(ts.EmitHint.Unspecified, canonical(decl, printer), sf);
    declName = decl.name && ts.isIdentifier(decl.name) ? decl.name.text : undefined;
  }
  text = text.replace(/^(?:(?:export|declare|default)\s+)+/, "");
  if (exportName && declName && declName !== exportName) text += `\n// exported as ${exportName}`;
  return text;
}

/** Calls `found` with each symbol a declaration names in a type or heritage position. */
function collectReferences(node, checker, found) {
  const visit = (n) => {
    let name;
    if (ts.isTypeReferenceNode(n)) name = n.typeName;
    else if (ts.isExpressionWithTypeArguments(n)) name = n.expression;
    else if (ts.isTypeQueryNode(n)) name = n.exprName;
    else if (ts.isImportTypeNode(n)) name = n.qualifier;
    if (name) {
      const last = ts.isQualifiedName(name) ? name.right : ts.isPropertyAccessExpression(name) ? name.name : name;
      const sym = checker.getSymbolAtLocation(last);
      if (sym && !(sym.flags & ts.SymbolFlags.TypeParameter)) found(resolveAlias(checker, sym));
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
}

/** Where an export that leads outside the workspace comes from: the module specifier of the re-export naming it. */
function externalSource(checker, moduleSymbol, name, decl) {
  let symbol = checker.getExportsOfModule(moduleSymbol).find((s) => s.escapedName.toString() === name);
  for (let hops = 0; symbol && hops < 20; hops++) {
    const decl = symbol.declarations?.find((d) => ts.isExportSpecifier(d) || ts.isImportSpecifier(d) || ts.isImportClause(d));
    const from = decl && importOrExportDeclaration(decl)?.moduleSpecifier;
    if (from && ts.isStringLiteral(from) && !from.text.startsWith(".")) return from.text;
    symbol = symbol.flags & ts.SymbolFlags.Alias ? checker.getImmediateAliasedSymbol(symbol) : undefined;
  }
  return decl ? packageNameOf(decl.getSourceFile().fileName) : "?";
}

function importOrExportDeclaration(node) {
  for (let n = node; n; n = n.parent) if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) return n;
  return undefined;
}

function packageNameOf(fileName) {
  const parts = fileName.split(sep);
  const i = parts.lastIndexOf("node_modules");
  if (i < 0) return "?";
  return parts[i + 1]?.startsWith("@") ? `${parts[i + 1]}/${parts[i + 2]}` : parts[i + 1];
}

/** A short line diff (first lines that differ), enough to see what changed without a diff tool. */
function briefDiff(before, after, limit = 12) {
  const a = new Set(before.split("\n"));
  const b = new Set(after.split("\n"));
  const removed = before
    .split("\n")
    .filter((l) => !b.has(l))
    .map((l) => `  - ${l}`);
  const added = after
    .split("\n")
    .filter((l) => !a.has(l))
    .map((l) => `  + ${l}`);
  const all = [...removed, ...added];
  return all.length > limit ? [...all.slice(0, limit), `  … ${all.length - limit} more lines`] : all;
}

export function checkReports(root, options) {
  const problems = [];
  for (const { pkg, path, text } of buildReports(root, options)) {
    const shown = relative(root, path);
    if (!existsSync(path)) {
      problems.push(`${pkg.name}: no API report (${shown})`);
      continue;
    }
    const current = readFileSync(path, "utf8");
    if (current !== text) problems.push([`${pkg.name}: API differs from ${shown}`, ...briefDiff(current, text)].join("\n"));
  }
  return problems;
}

/**
 * The command line, callable in-process: returns the exit code and writes through `out`/`err`.
 * @param {string[]} argv
 * @param {{ out?: (line: string) => void, err?: (line: string) => void }} [io]
 */
export function runCli(argv, { out = console.log, err = console.error } = {}) {
  try {
    return main(argv, out, err);
  } catch (error) {
    err(`✖ ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

function main(argv, out, err) {
  const mode = argv[0];
  const root = resolve(option(argv, "--root") ?? join(dirname(fileURLToPath(import.meta.url)), ".."));
  const filter = option(argv, "--filter");
  if (mode !== "check" && mode !== "update") {
    err(`usage: api-report.mjs check|update [--root DIR] [--filter NAME] (got "${mode ?? ""}")`);
    return 2;
  }
  const started = performance.now();
  if (mode === "update") {
    let changed = 0;
    const reports = buildReports(root, { filter });
    for (const { path, text } of reports) {
      if (existsSync(path) && readFileSync(path, "utf8") === text) continue;
      writeFileSync(path, text);
      changed++;
      out(`wrote ${relative(root, path)}`);
    }
    out(`API reports: ${reports.length} packages, ${changed} updated (${secondsSince(started)} s)`);
    return 0;
  }
  const problems = checkReports(root, { filter });
  if (problems.length > 0) {
    err(problems.join("\n\n"));
    err(
      `\n✖ ${problems.length} package API(s) differ from their reports. If the change is intended, run \`pnpm api:update\`,` +
        " commit the reports, and add a changeset (`pnpm changeset`) saying what changed for users (with a Migrating note if it breaks them).",
    );
    return 1;
  }
  out(`API reports match (${secondsSince(started)} s)`);
  return 0;
}

function option(argv, name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

function secondsSince(start) {
  return ((performance.now() - start) / 1000).toFixed(1);
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = runCli(process.argv.slice(2));
}
