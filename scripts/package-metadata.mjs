// The metadata every published package.json must carry; `pnpm pack:lint` reports what is missing.

/** Problems with the manifest fields a published package must have; `rel` is its folder from the root. */
export function metadataProblems(manifest, rel, rootManifest) {
  const problems = [];
  const repoUrl = rootManifest.repository?.url;
  const repo = manifest.repository;
  if (!repo || typeof repo !== "object") problems.push('repository: missing (an object: { type: "git", url, directory })');
  else {
    if (repoUrl && repo.url !== repoUrl) problems.push(`repository.url: "${repo.url}", expected the root's "${repoUrl}"`);
    if (repo.directory !== rel) problems.push(`repository.directory: "${repo.directory ?? ""}", expected "${rel}"`);
  }
  if (!manifest.license) problems.push("license: missing");
  if (!manifest.homepage) problems.push("homepage: missing");
  else if (rootManifest.homepage && !manifest.homepage.startsWith(rootManifest.homepage.replace(/#.*$/, ""))) {
    problems.push(`homepage: "${manifest.homepage}" is not under the root's "${rootManifest.homepage}"`);
  }
  if (!Array.isArray(manifest.keywords) || manifest.keywords.length === 0) problems.push("keywords: missing or empty");
  if (!manifest.engines?.node) problems.push("engines.node: missing");
  else if (rootManifest.engines?.node && manifest.engines.node !== rootManifest.engines.node) {
    problems.push(`engines.node: "${manifest.engines.node}", expected the root's "${rootManifest.engines.node}"`);
  }
  if (manifest.sideEffects === undefined) {
    problems.push("sideEffects: missing (false, or the files that have top-level side effects)");
  }
  if (manifest.name?.startsWith("@") && manifest.publishConfig?.access !== "public") {
    problems.push('publishConfig.access: must be "public" for a scoped package');
  }
  if (!manifest.description) problems.push("description: missing");
  return problems;
}
