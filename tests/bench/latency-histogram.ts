import { BUCKET_MS } from './sse-load-protocol.ts';

/** A merged latency histogram (bucket → count) with nearest-rank percentiles. */
export class LatencyHistogram {
  private readonly buckets = new Map<number, number>();
  private total = 0;

  add(pairs: Iterable<[number, number]>): void {
    for (const [bucket, count] of pairs) {
      this.buckets.set(bucket, (this.buckets.get(bucket) ?? 0) + count);
      this.total += count;
    }
  }

  get count(): number {
    return this.total;
  }

  /** The p-th percentile in milliseconds (upper edge of its bucket); NaN when empty. */
  percentile(p: number): number {
    if (this.total === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.total));
    let seen = 0;
    for (const bucket of [...this.buckets.keys()].sort((a, b) => a - b)) {
      seen += this.buckets.get(bucket)!;
      if (seen >= rank) return (bucket + 1) * BUCKET_MS;
    }
    return Number.NaN;
  }
}
