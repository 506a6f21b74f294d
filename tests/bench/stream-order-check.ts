/** Loss, duplicate and order counts of streams that never reconnect, from messageIds alone. */
export interface StreamOrderCounts {
  streams: number;
  /** Messages due over all streams (each stream's room history). */
  expected: number;
  received: number;
  /** In the room's history, never received. */
  lost: number;
  /** Received more than once (a stream that never reconnects is owed no replay). */
  duplicated: number;
  /** Received after a message that comes later in the room's history. */
  reordered: number;
  /** Received but not in the room's history. */
  unexpected: number;
  /** First few problems, naming the stream. */
  samples: string[];
}

/**
 * Checks each stream's received messageIds against its room's history (list order). Streams opened
 * before the room's first append owe every message of the history, once, in that order.
 */
export function checkStreamOrder(streams: Array<{ key: string; history: readonly string[]; received: readonly string[] }>): StreamOrderCounts {
  const counts: StreamOrderCounts = { streams: streams.length, expected: 0, received: 0, lost: 0, duplicated: 0, reordered: 0, unexpected: 0, samples: [] };
  const positions = new WeakMap<readonly string[], Map<string, number>>();
  const note = (text: string) => {
    if (counts.samples.length < 5) counts.samples.push(text);
  };
  for (const { key, history, received } of streams) {
    let position = positions.get(history);
    if (!position) positions.set(history, (position = new Map(history.map((id, i) => [id, i]))));
    counts.expected += history.length;
    counts.received += received.length;
    const seen = new Set<string>();
    let highest = -1;
    for (const id of received) {
      const at = position.get(id);
      if (at === undefined) {
        counts.unexpected += 1;
        note(`${key}: ${id} is not in the room`);
      } else if (seen.has(id)) {
        counts.duplicated += 1;
        note(`${key}: #${at} again`);
      } else {
        seen.add(id);
        if (at < highest) {
          counts.reordered += 1;
          note(`${key}: #${at} after #${highest}`);
        }
        highest = Math.max(highest, at);
      }
    }
    const lost = history.length - seen.size;
    if (lost > 0) note(`${key}: ${lost} of ${history.length} never arrived`);
    counts.lost += lost;
  }
  return counts;
}
