import type { Channel } from '../backbone.ts';
import { partitionLabel, partitionOf } from '../partition.ts';

/**
 * Key layout: `<prefix>:{<channel>:<pp>}:stream` and `<prefix>:{<channel>:<pp>}:dead`. The hash tag
 * holds one partition, so a partition's stream and dead letters share a Redis Cluster slot (dead-
 * lettering is one MULTI) while partitions spread over slots.
 */
export class StreamKeys {
  constructor(
    readonly prefix: string,
    readonly partitions: number,
  ) {}

  partitionOf(scopeKey: string): number {
    return partitionOf(scopeKey, this.partitions);
  }

  stream(channel: Channel, partition: number): string {
    return `${this.tag(channel, partition)}:stream`;
  }

  dead(channel: Channel, partition: number): string {
    return `${this.tag(channel, partition)}:dead`;
  }

  /** Stream keys of every partition of a channel, in partition order. */
  streams(channel: Channel): string[] {
    return Array.from({ length: this.partitions }, (_, p) => this.stream(channel, p));
  }

  deads(channel: Channel): string[] {
    return Array.from({ length: this.partitions }, (_, p) => this.dead(channel, p));
  }

  private tag(channel: Channel, partition: number): string {
    return `${this.prefix}:{${channel}:${partitionLabel(partition, this.partitions)}}`;
  }
}
