import { AntlerError, ErrorCodes } from "./errors.js";

/** Providers of one kind (models, sandboxes, storage), keyed by the id config.yaml picks them by. */
export class ProviderRegistry<T extends { readonly id: string }> {
  private readonly entries = new Map<string, { value: T; plugin: string }>();

  constructor(private readonly kind: string) {}

  /** A second provider with the same id is a setup error naming the plugin that registered the first. */
  add(value: T, plugin: string, where: string): void {
    const existing = this.entries.get(value.id);
    if (existing) {
      throw new AntlerError(ErrorCodes.PLUGIN_SETUP_FAILED, `${this.kind} "${value.id}" is already registered by ${existing.plugin}`, {
        where,
      });
    }
    this.entries.set(value.id, { value, plugin });
  }

  get(id: string): T | undefined {
    return this.entries.get(id)?.value;
  }

  get ids(): string[] {
    return [...this.entries.keys()];
  }

  /** Entries in registration order, with the plugin that registered each. */
  list(): Array<{ value: T; plugin: string }> {
    return [...this.entries.values()];
  }
}
