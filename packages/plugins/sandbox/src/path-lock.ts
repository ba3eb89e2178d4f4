/**
 * Serializes async work per key (DeerFlow serializes edits per sandbox id and path). Waiters run in arrival
 * order; a key's entry is dropped when its last waiter finishes, so the map only holds keys being worked on.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => done);
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with work running or waiting (for tests and diagnostics). */
  get size(): number {
    return this.tails.size;
  }
}
