import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { metadataProblems } from "../package-metadata.mjs";
import { publishedPackages } from "../workspace-packages.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

const complete = {
  name: "@antler/plugin-demo",
  description: "A demo.",
  license: "MIT",
  repository: { type: "git", url: rootManifest.repository.url, directory: "packages/plugins/demo" },
  homepage: `${rootManifest.homepage.replace(/#.*$/, "")}/tree/main/packages/plugins/demo#readme`,
  keywords: ["antler"],
  engines: { node: rootManifest.engines.node },
  sideEffects: false,
  publishConfig: { access: "public" },
};

describe("package metadata", () => {
  it("is complete in every published package.json of the workspace", () => {
    const problems = publishedPackages(root).flatMap((p) =>
      metadataProblems(p.manifest, relative(root, p.dir), rootManifest).map((m) => `${p.name}: ${m}`),
    );
    expect(problems).toEqual([]);
  });

  it("accepts a complete manifest", () => {
    expect(metadataProblems(complete, "packages/plugins/demo", rootManifest)).toEqual([]);
  });

  it("reports a missing sideEffects, keywords and public access, each by field", () => {
    const { sideEffects: _s, keywords: _k, publishConfig: _p, ...partial } = complete;
    expect(metadataProblems(partial, "packages/plugins/demo", rootManifest)).toEqual([
      "keywords: missing or empty",
      "sideEffects: missing (false, or the files that have top-level side effects)",
      'publishConfig.access: must be "public" for a scoped package',
    ]);
  });

  it("reports a repository directory that is not the package's folder", () => {
    expect(metadataProblems(complete, "packages/plugins/other", rootManifest)).toEqual([
      'repository.directory: "packages/plugins/demo", expected "packages/plugins/other"',
    ]);
  });
});
