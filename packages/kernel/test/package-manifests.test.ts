import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

// What every publishable package's package.json must say so that a project outside the workspace can install it
// with npm and end up with one copy of the packages that share instances with the kernel. The packed-tarball
// install itself is npm-install.int.test.ts.
const REPO_ROOT = resolve(import.meta.dirname, "../../..");
/** Packages whose classes and schemas cross package boundaries: a second copy breaks instanceof and registries. */
const SHARED = ["@langchain/core", "@langchain/langgraph", "@langchain/langgraph-checkpoint", "langchain", "zod"];

interface Manifest {
  name: string;
  private?: boolean;
  types?: string;
  exports?: Record<string, string | Record<string, string>>;
  files?: string[];
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function packageDirs(): string[] {
  const dirs = [join(REPO_ROOT, "packages/kernel"), join(REPO_ROOT, "packages/model-kit"), join(REPO_ROOT, "packages/storage-kit")];
  for (const family of ["plugins", "sandbox-providers", "community-tools"]) {
    const base = join(REPO_ROOT, "packages", family);
    for (const name of readdirSync(base)) if (existsSync(join(base, name, "package.json"))) dirs.push(join(base, name));
  }
  return dirs;
}

const packages = packageDirs().map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest }));

describe("publishable package manifests", () => {
  it("finds every package under packages/, none of them private", () => {
    expect(packages.length).toBeGreaterThan(20);
    expect(packages.filter((p) => p.manifest.private).map((p) => p.manifest.name)).toEqual([]);
  });

  for (const { dir, manifest } of packages) {
    describe(manifest.name, () => {
      it("declares types, engines (node ^20.19.0 || >=22) and files (dist without build info, README.md, which exists)", () => {
        expect(manifest.types).toBe("./dist/index.d.ts");
        expect(manifest.engines?.node).toBe("^20.19.0 || >=22");
        expect(manifest.files).toEqual(expect.arrayContaining(["dist", "!dist/.tsbuildinfo", "README.md"]));
        expect(existsSync(join(dir, "README.md"))).toBe(true);
      });

      it("exports every subpath with types first and a JavaScript file under dist", () => {
        for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
          if (typeof target === "string") {
            expect(subpath).toBe("./package.json");
            continue;
          }
          const published = Object.keys(target).filter((k) => k !== "antler:source");
          expect(published, `exports["${subpath}"]`).toEqual(["types", "default"]);
          expect(target.types, `exports["${subpath}"].types`).toMatch(/^\.\/dist\/.+\.d\.ts$/);
          expect(target.default, `exports["${subpath}"].default`).toMatch(/^\.\/dist\/.+\.js$/);
        }
      });

      it("takes the kernel, LangChain and zod as peers (one copy per project), with a tested devDependency in range", () => {
        const shared = manifest.name === "@antler/kernel" ? SHARED : [...SHARED, "@antler/kernel"];
        for (const name of shared) {
          expect(manifest.dependencies?.[name], `${name} must be a peer, not a dependency`).toBeUndefined();
          const peer = manifest.peerDependencies?.[name];
          if (peer === undefined) continue;
          const dev = manifest.devDependencies?.[name];
          expect(dev, `${name} is a peer, so the workspace needs it as a devDependency`).toBeDefined();
          if (name === "@antler/kernel") {
            expect(peer).toBe("workspace:^");
            continue;
          }
          expect(semver.satisfies(dev as string, peer), `devDependency ${name}@${dev} satisfies the peer range ${peer}`).toBe(true);
        }
        if (manifest.name !== "@antler/kernel") expect(manifest.peerDependencies?.["@antler/kernel"]).toBe("workspace:^");
      });
    });
  }
});
