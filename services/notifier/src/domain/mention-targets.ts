import type { StoredMention, StoredSpan } from '@chat/store';

/** One principal a message mentions, with every span that mentions it. */
export interface MentionTarget {
  kind: 'human' | 'bot';
  id: string;
  /** Sorted by position; a span repeated in the input appears once. */
  spans: StoredSpan[];
}

/**
 * Groups a message's mentions by target, so each target gets one notification carrying all of its
 * spans. Targets keep the order of their first mention.
 */
export function groupMentionTargets(mentions: readonly StoredMention[]): MentionTarget[] {
  const byTarget = new Map<string, MentionTarget>();
  for (const mention of mentions) {
    const key = `${mention.principalKind}:${mention.principalId}`;
    let target = byTarget.get(key);
    if (!target) {
      target = { kind: mention.principalKind, id: mention.principalId, spans: [] };
      byTarget.set(key, target);
    }
    if (!target.spans.some((s) => s.startByte === mention.startByte && s.endByte === mention.endByte)) {
      target.spans.push({ startByte: mention.startByte, endByte: mention.endByte });
    }
  }
  for (const target of byTarget.values()) target.spans.sort((a, b) => a.startByte - b.startByte || a.endByte - b.endByte);
  return [...byTarget.values()];
}
