// Runs load-client.mjs in a child process with one job and resolves with its JSON result.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("./load-client.mjs", import.meta.url));

export function runLoadClient(job) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, JSON.stringify(job)], { maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`load client (${job.mode} ${job.protocol ?? job.target}) failed: ${stderr || error.message}`));
      resolve(JSON.parse(stdout));
    });
  });
}

/** The p-th percentile (nearest rank) of `values`. */
export function pct(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const median = (values) => pct(values, 50);
