// Types for the tests that list the workspace's published packages.
export declare function publishedPackages(root: string): { name: string; dir: string; manifest: Record<string, unknown> }[];
