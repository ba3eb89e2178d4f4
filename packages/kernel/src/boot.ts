import type { CreateKernelOptions } from "./kernel.js";
import type { Kernel } from "./plugin.js";

/**
 * Boots a kernel: reads and validates config, imports the default preset and `plugins:` entries, orders plugins
 * by `dependsOn`, validates each plugin's config and runs every `setup`. Nothing is started; call
 * `kernel.start()`. The host (config, zod, YAML, DI) is loaded here, on first boot, not when the kernel is imported.
 */
export async function createKernel(options: CreateKernelOptions = {}): Promise<Kernel> {
  const host = await import("./kernel.js");
  return host.createKernel(options);
}
