/**
 * One run per key at a time in this process: the first caller of a key starts `run`, every
 * caller that arrives while it is running gets the same promise (its result or its failure), and
 * the key is free again once it settles. 500 readers of a cold page make one build, not 500:
 * without it a spike's first second would rebuild the same page hundreds of times, each reading
 * the order and 20 stories from the store.
 */
export class SingleFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  do(key: string, run: () => Promise<T>): Promise<T> {
    const current = this.running.get(key);
    if (current) return current;
    const started = (async () => {
      try {
        return await run();
      } finally {
        this.running.delete(key);
      }
    })();
    this.running.set(key, started);
    return started;
  }

  /** Keys being run now. */
  get size(): number {
    return this.running.size;
  }
}
