import type { Channel, DeadLetter } from '../backbone.ts';
import { compareEntryIds } from '../entry-id.ts';
import type { RedisClient } from '@chat/redis-client';
import { execPerSlot } from './exec-per-slot.ts';
import { flatToRecord } from './flat-record.ts';
import type { RawEntry } from './stream-entry.ts';

/** The newest `limit` dead letters across a channel's partitions. */
export async function listDeadLetters(redis: RedisClient, channel: Channel, deadKeys: string[], limit: number): Promise<DeadLetter[]> {
  const replies = await execPerSlot(redis, deadKeys, (key) => key, (pipeline, key) => pipeline.xrevrange(key, '+', '-', 'COUNT', limit));
  const letters: { deadId: string; letter: DeadLetter }[] = [];
  for (const [err, entries] of replies) {
    if (err) throw err;
    for (const [deadId, fields] of entries as RawEntry[]) {
      const r = flatToRecord(fields);
      letters.push({
        deadId,
        letter: {
          channel,
          scopeKey: String(r['scopeKey'] ?? ''),
          seq: Number(r['seq'] ?? 0),
          data: String(r['data'] ?? ''),
          entryId: String(r['entryId'] ?? ''),
          group: String(r['group'] ?? ''),
          consumer: String(r['consumer'] ?? ''),
          deliveries: Number(r['deliveries'] ?? 0),
          deadLetteredAt: Number(r['deadLetteredAt'] ?? 0),
        },
      });
    }
  }
  letters.sort((a, b) => b.letter.deadLetteredAt - a.letter.deadLetteredAt || compareEntryIds(b.deadId, a.deadId));
  return letters.slice(0, limit).map(({ letter }) => letter);
}
