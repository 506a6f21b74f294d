/**
 * Coalesces concurrent lookups into few queries: while up to `maxConcurrent` queries run, new
 * lookups queue, and the next query answers all of them (up to `maxBatch`). At low load a lookup
 * goes out at once, alone; under load one round trip answers many. A failed query fails the lookups
 * it carried.
 */
export class LookupBatcher<I, O> {
  private queue: Array<{ input: I; resolve(output: O): void; reject(err: unknown): void }> = [];
  private running = 0;

  constructor(
    private readonly lookup: (inputs: I[]) => Promise<O[]>,
    private readonly options: { maxBatch: number; maxConcurrent: number },
  ) {}

  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.options.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.running += 1;
      void this.run(batch);
    }
  }

  private async run(batch: LookupBatcher<I, O>['queue']): Promise<void> {
    try {
      const outputs = await this.lookup(batch.map((entry) => entry.input));
      batch.forEach((entry, i) => entry.resolve(outputs[i]!));
    } catch (err) {
      for (const entry of batch) entry.reject(err);
    } finally {
      this.running -= 1;
      this.pump();
    }
  }
}
