/**
 * Group commit for the dedup stage's decisions: jobs handed in while a batch is being decided
 * wait and go together in the next one, so under load one transaction (one set of lookups, one
 * lock statement, one commit) decides many items, and an idle stage still decides a lone item at
 * once (a batch of one). At most `maxInFlight` batches run at a time, each of at most `maxBatch`.
 *
 * `run` answers per item (a value or the item's own error). If it throws for the whole batch (a
 * deadlock, a lost connection, an item whose fault takes the transaction down), each item of a
 * batch of several is tried again alone, so one bad item fails only its own job.
 */
interface Waiting<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

export class Batcher<I, O> {
  private readonly waiting: Waiting<I, O>[] = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<(O | Error)[]>,
    private readonly limits: { maxBatch: number; maxInFlight: number },
  ) {
    if (limits.maxBatch < 1 || limits.maxInFlight < 1) {
      throw new RangeError("batcher: maxBatch and maxInFlight must be at least 1");
    }
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      // Once the current turn of the event loop is over: the jobs of one claim, handed over one
      // after another in it, go in one batch rather than the first alone.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.next();
        });
      }
    });
  }

  /** Items waiting for a batch (not yet in one). */
  get backlog(): number {
    return this.waiting.length;
  }

  private next(): void {
    while (this.running < this.limits.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.limits.maxBatch);
      this.running++;
      void this.decide(batch).finally(() => {
        this.running--;
        this.next();
      });
    }
  }

  private async decide(batch: Waiting<I, O>[]): Promise<void> {
    let answers: (O | Error)[];
    try {
      answers = await this.run(batch.map((b) => b.item));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return;
      }
      // Alone, one after another: the batch's fault is found and stays with its own item.
      for (const b of batch) {
        try {
          const [answer] = await this.run([b.item]);
          if (answer instanceof Error) b.reject(answer);
          else b.resolve(answer as O);
        } catch (e) {
          b.reject(e);
        }
      }
      return;
    }
    batch.forEach((b, i) => {
      const answer = answers[i];
      if (answer instanceof Error) b.reject(answer);
      else if (answer === undefined) b.reject(new Error("batcher: no answer for an item"));
      else b.resolve(answer);
    });
  }
}
