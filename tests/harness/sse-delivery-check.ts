import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse } from '@chat/contracts';
import type { ApiClient, RoomScope } from './api-client.ts';
import type { ReceivedMessage } from './sse-resuming-client.ts';

/**
 * Jepsen-style counts of one client's deliveries against the durable history (the list endpoint's
 * items, in list order).
 */
export interface DeliveryReport {
  expected: number;
  delivered: number;
  /** In the history, never delivered. */
  lost: number;
  /** Delivered again, beyond the one replay spec rule 7 allows (the last event before a reconnect, first on the next connection). */
  duplicated: number;
  /** Allowed replays seen (for information). */
  replayed: number;
  /** Delivered but not in the history, or with data that is not byte-equal to the listed message. */
  unexpected: number;
  /** Delivered after a message that comes later in list order. */
  reordered: number;
  /** Message events without an id, or whose id changes for the same message. */
  badIds: number;
  /** First few problems, for the failure message. */
  samples: string[];
}

/** Sorts one client's received message events into lost / duplicated / unexpected / reordered. */
export function checkDeliveries(history: MessageResponse[], received: ReceivedMessage[]): DeliveryReport {
  const position = new Map<string, number>();
  const listed = new Map<string, string>();
  history.forEach((m, i) => {
    position.set(m.messageId, i);
    listed.set(m.messageId, canonicalJson(m));
  });
  const report: DeliveryReport = { expected: history.length, delivered: received.length, lost: 0, duplicated: 0, replayed: 0, unexpected: 0, reordered: 0, badIds: 0, samples: [] };
  const note = (text: string) => {
    if (report.samples.length < 10) report.samples.push(text);
  };
  const seen = new Set<string>();
  const idOf = new Map<string, string>();
  let highest = -1;
  let previous: { messageId: string; connection: number } | undefined;
  for (const [n, event] of received.entries()) {
    let message: MessageResponse;
    try {
      message = JSON.parse(event.data) as MessageResponse;
    } catch {
      report.unexpected += 1;
      note(`event ${n}: data is not JSON`);
      continue;
    }
    const at = position.get(message.messageId);
    if (at === undefined || canonicalJson(message) !== listed.get(message.messageId)) {
      report.unexpected += 1;
      note(`event ${n}: ${at === undefined ? 'not in the history' : 'data differs from the listed message'} (${message.messageId})`);
      previous = { messageId: message.messageId, connection: event.connection };
      continue;
    }
    if (event.id === '' || (idOf.has(message.messageId) && idOf.get(message.messageId) !== event.id)) {
      report.badIds += 1;
      note(`event ${n}: id ${JSON.stringify(event.id)} for ${message.messageId}`);
    }
    idOf.set(message.messageId, event.id);
    if (seen.has(message.messageId)) {
      const allowedReplay = previous !== undefined && previous.messageId === message.messageId && previous.connection !== event.connection;
      if (allowedReplay) report.replayed += 1;
      else {
        report.duplicated += 1;
        note(`event ${n}: duplicate of #${at} on connection ${event.connection}`);
      }
    } else {
      seen.add(message.messageId);
      if (at < highest) {
        report.reordered += 1;
        note(`event ${n}: #${at} after #${highest}`);
      }
      highest = Math.max(highest, at);
    }
    previous = { messageId: message.messageId, connection: event.connection };
  }
  report.lost = history.filter((m) => !seen.has(m.messageId)).length;
  if (report.lost > 0) note(`lost e.g. #${history.findIndex((m) => !seen.has(m.messageId))}`);
  return report;
}

/** Sums the reports of several clients. */
export function sumReports(reports: DeliveryReport[]): Omit<DeliveryReport, 'samples' | 'expected'> & { clients: number } {
  const sum = { clients: reports.length, delivered: 0, lost: 0, duplicated: 0, replayed: 0, unexpected: 0, reordered: 0, badIds: 0 };
  for (const r of reports) {
    sum.delivered += r.delivered;
    sum.lost += r.lost;
    sum.duplicated += r.duplicated;
    sum.replayed += r.replayed;
    sum.unexpected += r.unexpected;
    sum.reordered += r.reordered;
    sum.badIds += r.badIds;
  }
  return sum;
}

/** True when a delivery run has nothing wrong in it. */
export function isClean(report: Pick<DeliveryReport, 'lost' | 'duplicated' | 'unexpected' | 'reordered' | 'badIds'>): boolean {
  return report.lost === 0 && report.duplicated === 0 && report.unexpected === 0 && report.reordered === 0 && report.badIds === 0;
}

/** Fails, naming the first problems (and `context`), unless the report is clean (see `isClean`). */
export function expectClean(report: DeliveryReport, context = ''): void {
  expect(
    { lost: report.lost, duplicated: report.duplicated, unexpected: report.unexpected, reordered: report.reordered, badIds: report.badIds },
    [context, ...report.samples].filter((s) => s !== '').join('; '),
  ).to.deep.equal({ lost: 0, duplicated: 0, unexpected: 0, reordered: 0, badIds: 0 });
}

/** JSON with object keys sorted, so two equal values compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** Every message of a room in list order, paging with the largest page through a validating client. */
export async function readRoomHistory(api: ApiClient, scope: RoomScope, token: string): Promise<MessageResponse[]> {
  const items: MessageResponse[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api.list<MessagePageResponse>(scope, token, query);
    if (page.status !== 200) throw new Error(`listing the room answered ${page.status}: ${page.text}`);
    items.push(...page.body.items);
    cursor = page.body.nextCursor ?? null;
  } while (cursor !== null);
  return items;
}

/** Writes one line with a run's counts to the test output (the figures the reliability table asks for). */
export function printReport(title: string, counts: object): void {
  process.stdout.write(`      [${title}] ${Object.entries(counts).map(([k, v]) => `${k}=${String(v)}`).join(' ')}\n`);
}
