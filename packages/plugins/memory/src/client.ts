import { DEFAULT_USER_ID, type Kernel } from "@antler/kernel";
import type {
  FactCreateInput,
  FactSearchResponse,
  FactUpdateInput,
  MemoryConfigResponse,
  MemoryExport,
  MemoryResponse,
  MemoryStatusResponse,
} from "./schemas.js";
import { type MemoryService, memoryScope } from "./service.js";
import type { MemoryFact } from "./store.js";
import { MEMORY } from "./token.js";

/** Who a call acts for: the client's user unless `userId` is given; `agent` picks a custom agent's memory. */
export interface MemoryCallOptions {
  userId?: string;
  agent?: string | null;
}

/** Anything that leads to a kernel with the memory plugin loaded: an `AntlerClient`, a kernel, or the service. */
export type MemoryClientTarget = { kernel: Kernel } | Kernel | MemoryService;

function isKernel(value: object): value is Kernel {
  return "scope" in value && "hooks" in value && "config" in value;
}

/**
 * In-process twin of the gateway's `/api/memory` routes: the same functions, the same response shapes
 * (`memoryResponseSchema`, `memoryConfigResponseSchema`, ...). The gateway's handlers call these methods.
 *
 * ```ts
 * const memory = new MemoryClient(client, { userId: "alice" });
 * await memory.createFact({ content: "Prefers TypeScript", category: "preference" });
 * const dump = await memory.exportMemory();
 * ```
 */
export class MemoryClient {
  private readonly resolveService: () => MemoryService;
  private readonly userId: string;
  private readonly agent: string | null;

  constructor(target: MemoryClientTarget, options: MemoryCallOptions = {}) {
    if ("queueExtraction" in target) this.resolveService = () => target;
    else {
      const kernel = isKernel(target) ? target : target.kernel;
      this.resolveService = () => kernel.scope.resolve(MEMORY);
    }
    this.userId = options.userId ?? DEFAULT_USER_ID;
    this.agent = options.agent ?? null;
  }

  private call(options: MemoryCallOptions | undefined) {
    const scope = memoryScope(options?.userId ?? this.userId, options?.agent === undefined ? this.agent : options.agent);
    return { service: this.resolveService(), scope };
  }

  /** Profile, history summaries and every fact (newest first). */
  async getMemory(options?: MemoryCallOptions): Promise<MemoryResponse> {
    const { service, scope } = this.call(options);
    return service.get(scope);
  }

  async exportMemory(options?: MemoryCallOptions): Promise<MemoryExport> {
    const { service, scope } = this.call(options);
    return service.export(scope);
  }

  /** Loads an export: `merge` (default) adds to what is there, `replace` clears first. Validated before any write. */
  async importMemory(data: unknown, options?: MemoryCallOptions & { mode?: "merge" | "replace" }): Promise<MemoryResponse> {
    const { service, scope } = this.call(options);
    return service.import(scope, data, { mode: options?.mode ?? "merge" });
  }

  async clearMemory(options?: MemoryCallOptions): Promise<MemoryResponse> {
    const { service, scope } = this.call(options);
    return service.clear(scope);
  }

  async listFacts(options?: MemoryCallOptions & { limit?: number }): Promise<{ facts: MemoryFact[] }> {
    const { service, scope } = this.call(options);
    return { facts: await service.listFacts(scope, options?.limit !== undefined ? { limit: options.limit } : {}) };
  }

  /** Full-text search over the facts, most relevant first. */
  async searchMemory(query: string, options?: MemoryCallOptions & { limit?: number; category?: string }): Promise<FactSearchResponse> {
    const { service, scope } = this.call(options);
    const hits = await service.search(scope, query, {
      ...(options?.limit !== undefined ? { limit: options.limit } : {}),
      ...(options?.category ? { category: options.category } : {}),
    });
    return { query, facts: hits };
  }

  async getFact(id: string, options?: MemoryCallOptions): Promise<MemoryFact> {
    const { service, scope } = this.call(options);
    return service.getFact(scope, id);
  }

  /** Adds a fact (secrets in it are redacted first). */
  async createFact(input: FactCreateInput, options?: MemoryCallOptions): Promise<MemoryFact> {
    const { service, scope } = this.call(options);
    return service.createFact(scope, input, "manual");
  }

  async updateFact(id: string, patch: FactUpdateInput, options?: MemoryCallOptions): Promise<MemoryFact> {
    const { service, scope } = this.call(options);
    return service.updateFact(scope, id, patch);
  }

  async deleteFact(id: string, options?: MemoryCallOptions): Promise<{ id: string; deleted: true }> {
    const { service, scope } = this.call(options);
    return service.deleteFact(scope, id);
  }

  getMemoryConfig(): MemoryConfigResponse {
    return this.resolveService().configView();
  }

  async getMemoryStatus(options?: MemoryCallOptions): Promise<MemoryStatusResponse> {
    const { service, scope } = this.call(options);
    return service.status(scope);
  }
}
