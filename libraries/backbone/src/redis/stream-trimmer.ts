import type { Channel, TrimReport } from '../backbone.ts';
import { entryIdAt, minEntryId } from '../entry-id.ts';
import type { RedisClient } from '@chat/redis-client';
import { execPerSlot } from './exec-per-slot.ts';
import { flatToRecord } from './flat-record.ts';

interface TrimSettings {
  retentionMs: number;
  approximate: boolean;
}

/**
 * The MINID a partition may be trimmed to: no higher than any group's last-delivered id (entries
 * after it are unread) or its oldest pending id (read, not acknowledged), and no higher than the
 * retention floor. Redis 7.0 has no ACKED trimming, so this is the only thing that keeps XTRIM from
 * deleting work a group still owes.
 */
export function safeMinId(floorId: string, groups: { lastDeliveredId: string; oldestPendingId: string | null }[]): string {
  let minId = floorId;
  for (const group of groups) {
    minId = minEntryId(minId, group.lastDeliveredId);
    if (group.oldestPendingId) minId = minEntryId(minId, group.oldestPendingId);
  }
  return minId;
}

/**
 * One trimming pass over a channel's partitions. Groups only move forward between the reads and
 * the XTRIM (last-delivered ids grow, pending entries get acknowledged), so a MINID computed from
 * a slightly old view is still safe; approximate trimming (`~`) only ever removes less.
 */
export async function trimChannel(redis: RedisClient, channel: Channel, streamKeys: string[], settings: TrimSettings): Promise<TrimReport> {
  const floorId = entryIdAt(Date.now() - settings.retentionMs);
  const infos = await execPerSlot(redis, streamKeys, (key) => key, (pipeline, key) => pipeline.xinfo('GROUPS', key));

  const groupsPerKey: { key: string; names: string[]; lastIds: string[] }[] = [];
  for (const [index, key] of streamKeys.entries()) {
    const [err, groups] = infos[index] ?? [null, null];
    if (err) {
      if (/no such key/i.test(err.message)) continue;
      throw err;
    }
    const records = (groups as unknown[]).map(flatToRecord);
    groupsPerKey.push({
      key,
      names: records.map((g) => String(g['name'])),
      lastIds: records.map((g) => String(g['last-delivered-id'])),
    });
  }

  const pendingQueries = groupsPerKey.flatMap(({ key, names }) => names.map((name) => ({ key, name })));
  const pendings = await execPerSlot(redis, pendingQueries, (q) => q.key, (pipeline, q) => pipeline.xpending(q.key, q.name));

  const steps: { key: string; minId: string; op: 'trim' | 'len' }[] = [];
  let cursor = 0;
  for (const { key, names, lastIds } of groupsPerKey) {
    const groups = names.map((_, i) => {
      const [err, summary] = pendings[cursor++] ?? [null, null];
      if (err) throw err;
      const oldest = (summary as unknown[] | null)?.[1];
      return { lastDeliveredId: lastIds[i] ?? '0-0', oldestPendingId: typeof oldest === 'string' ? oldest : null };
    });
    const minId = safeMinId(floorId, groups);
    // Each XTRIM is followed by its XLEN; one key's commands share a tag, so they keep that order.
    steps.push({ key, minId, op: 'trim' }, { key, minId, op: 'len' });
  }
  const trims = await execPerSlot(redis, steps, (s) => s.key, (pipeline, s) => {
    if (s.op === 'len') pipeline.xlen(s.key);
    else if (settings.approximate) pipeline.xtrim(s.key, 'MINID', '~', s.minId);
    else pipeline.xtrim(s.key, 'MINID', s.minId);
  });
  let removed = 0;
  let remaining = 0;
  for (let i = 0; i + 1 < trims.length; i += 2) {
    const [trimErr, trimmed] = trims[i] ?? [null, 0];
    const [lenErr, length] = trims[i + 1] ?? [null, 0];
    if (trimErr ?? lenErr) throw trimErr ?? lenErr;
    removed += Number(trimmed);
    remaining += Number(length);
  }
  return { channel, removed, remaining };
}
