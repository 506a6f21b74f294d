import { ulid } from 'ulid';
import { ResumingInboxReader } from '../inbox/inbox-stream-reader.ts';
import type { BenchCluster } from './bench-cluster.ts';
import { percentile, round } from './stats.ts';
import type { StreamScenario } from './stream-scenarios.ts';

export interface MentionLatencyOptions {
  /** Appends per second, open loop (sent on schedule whatever earlier ones are doing). @defaultValue 50 */
  rate: number;
  seconds: number;
}

export interface MentionLatencyResult {
  sent: number;
  failed: number;
  /** Notifications that never arrived within the drain time. */
  missing: number;
  /** Milliseconds from the append request's start to the `notification` event's receipt. */
  fromRequest: number[];
  /** Milliseconds from the append's 201 to the event's receipt (negative when the event won the race). */
  fromCreated: number[];
}

/**
 * Mention-to-inbox-event latency: one target holds an inbox stream (through a gateway); writers
 * append messages mentioning it to the repository room at a steady rate through the API processes
 * in turn. Each sample is the receipt time of the message's `notification` event minus the start of
 * its append request (and, second figure, minus the moment its 201 arrived).
 */
export async function measureMentionLatency(cluster: BenchCluster, options: MentionLatencyOptions): Promise<MentionLatencyResult> {
  const { fixture, core } = cluster;
  const target = fixture.targets[0]!;
  const writers = await Promise.all(
    fixture.writers.map(async (id) => ({
      id,
      token: await core.mintToken({ type: 'human', subjectId: id, expiresInSeconds: 3600 }),
      coreResource: await core.mintToken({ type: 'core_resource', subjectId: id, expiresInSeconds: 3600 }),
    })),
  );
  const reader = new ResumingInboxReader({
    gatewayUrls: cluster.gatewayUrls,
    repositoryId: fixture.repositoryId,
    token: await core.mintToken({ type: 'human', subjectId: target, expiresInSeconds: 3600 }),
    connectionMs: () => Infinity,
  });
  reader.start();
  while (reader.connections === 0) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 300));

  const path = `/v1/repositories/${fixture.repositoryId}/room/messages`;
  const send = async (i: number, started: Map<string, { requestAt: number; createdAt: number }>): Promise<boolean> => {
    const writer = writers[i % writers.length]!;
    const base = cluster.apiUrls[i % cluster.apiUrls.length]!;
    const prefix = `mention bench ${i} for `;
    const mention = `@${target}`;
    const body = { bodyMarkdown: `${prefix}${mention}`, mentions: [{ principalKind: 'human', principalId: target, startByte: Buffer.byteLength(prefix), endByte: Buffer.byteLength(prefix + mention) }] };
    const requestAt = performance.now();
    const response = await fetch(base + path, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${writer.token}`,
        'x-service-core-authorization': `Bearer ${writer.coreResource}`,
        'content-type': 'application/json',
        'idempotency-key': ulid(),
      },
      body: JSON.stringify(body),
    }).catch(() => null);
    const createdAt = performance.now();
    const message = response?.status === 201 ? ((await response.json()) as { messageId: string }) : null;
    if (!message) {
      await response?.arrayBuffer();
      return false;
    }
    started.set(message.messageId, { requestAt, createdAt });
    return true;
  };
  const arrivedOf = (started: Map<string, unknown>) => reader.events.filter((e) => started.has(String(e.data.messageId))).length;
  const drain = async (started: Map<string, unknown>) => {
    const deadline = Date.now() + 15_000;
    while (arrivedOf(started) < started.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  };

  // Warm-up, not measured: the first requests pay for lazy module loading, JIT and connection setup.
  const warmUp = new Map<string, { requestAt: number; createdAt: number }>();
  for (let i = 0; i < 20; i++) await send(i, warmUp);
  await drain(warmUp);

  const started = new Map<string, { requestAt: number; createdAt: number }>();
  let failed = 0;
  const total = Math.round(options.rate * options.seconds);
  const t0 = performance.now();
  const appends: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / options.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    appends.push(
      send(i, started).then((ok) => {
        if (!ok) failed++;
      }),
    );
  }
  await Promise.all(appends);
  const expected = started.size;
  await drain(started);
  await reader.stop();

  const fromRequest: number[] = [];
  const fromCreated: number[] = [];
  // The inbox may hold notifications of an earlier pass (replayed first); only this pass's count.
  for (const event of reader.events) {
    const sent = started.get(String(event.data.messageId));
    if (!sent) continue;
    fromRequest.push(event.receivedAt - sent.requestAt);
    fromCreated.push(event.receivedAt - sent.createdAt);
  }
  return { sent: total, failed, missing: expected - fromRequest.length, fromRequest, fromCreated };
}

/** `pnpm bench --only mention`: 50 appends/s for 10 s (3 s with `--quick`). */
export const mentionLatencyScenario: StreamScenario = {
  key: 'mention',
  async run(cluster, { quick }) {
    const result = await measureMentionLatency(cluster, { rate: 50, seconds: quick ? 3 : 10 });
    const ms = (sample: number[], p: number) => `${round(percentile(sample, p), 1)} ms`;
    const note = `${result.fromRequest.length} samples at 50/s, ${result.failed} appends failed, ${result.missing} notifications missing`;
    return [
      {
        name: 'mention → inbox event latency, from append request start',
        value: `p50 ${ms(result.fromRequest, 50)}, p99 ${ms(result.fromRequest, 99)}`,
        target: 'reported (no target set)',
        note,
      },
      {
        name: 'mention → inbox event latency, from the 201',
        value: `p50 ${ms(result.fromCreated, 50)}, p99 ${ms(result.fromCreated, 99)}`,
        target: 'reported (no target set)',
      },
    ];
  },
};
