// Types for the test of the metadata rules.
export declare function metadataProblems(manifest: Record<string, unknown>, rel: string, rootManifest: Record<string, unknown>): string[];
