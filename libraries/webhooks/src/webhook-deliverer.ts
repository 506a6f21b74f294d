import type { CoreClient } from '@chat/authz-client';
import type { CursorCodec } from '@chat/contracts';
import type { Logger } from '@chat/observability';
import type { Store, WebhookRedelivery } from '@chat/store';
import { AppError } from '@chat/contracts';
import { deliveryContent } from './delivery-body.ts';
import type { LaneQueue } from './lane-queue.ts';
import { LaneRunner, type DeliveryOutcome, type LaneRunnerSettings } from './lane-runner.ts';
import { principalMayRead } from './read-access.ts';
import { retryDelayMs } from './retry-backoff.ts';
import type { WebhookSender } from './webhook-sender.ts';

export interface WebhookDelivererSettings extends LaneRunnerSettings {
  /** Pause between looks for feed positions not yet handed to lanes. */
  dispatchIntervalMs: number;
  /** Feed positions handed to lanes per webhook per transaction. */
  dispatchBatchSize: number;
  /** Pause between sweeps for due lanes (a retry's wait ended, or a lane no queued job covers). */
  sweepIntervalMs: number;
}

export interface WebhookDelivererDeps {
  store: Store;
  core: CoreClient;
  cursors: CursorCodec;
  sender: WebhookSender;
  queue: LaneQueue;
  logger: Logger;
  clock: () => Date;
  observe?: (outcome: DeliveryOutcome | 'redelivered') => void;
}

/**
 * Delivers notifications to webhooks. Three loops feed the lane queue, each safe to run in every
 * notifier at once: the dispatcher hands the feed positions written since it last looked to their
 * lanes (one transaction per webhook, taken by one notifier, the others skip it) and queues those
 * lanes; the sweeper queues due lanes the store shows work for, which covers a retry whose wait
 * ended, a job lost with Redis, and a notification that arrived while its lane was finishing; the
 * redeliverer sends the dead letters a principal asked for again. The queue runs each lane with a
 * {@link LaneRunner}.
 */
export class WebhookDeliverer {
  private readonly runner: LaneRunner;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly loops = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly deps: WebhookDelivererDeps,
    private readonly settings: WebhookDelivererSettings,
  ) {
    this.runner = new LaneRunner(deps, settings);
  }

  start(): void {
    this.deps.queue.start((key) => this.runner.run(key));
    this.every(this.settings.dispatchIntervalMs, () => this.dispatch());
    this.every(this.settings.sweepIntervalMs, () => this.sweep());
    this.every(this.settings.sweepIntervalMs, () => this.redeliver());
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    while (this.loops.size > 0) await Promise.all([...this.loops]);
    await this.deps.queue.stop();
  }

  /** Runs `task` now and again `intervalMs` after each run ends; a failure is logged and the loop goes on. */
  private every(intervalMs: number, task: () => Promise<void>): void {
    const tick = () => {
      if (this.stopping) return;
      const run = task()
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'webhook delivery loop failed; it runs again'))
        .finally(() => {
          this.loops.delete(run);
          if (!this.stopping) this.timers.push(setTimeout(tick, intervalMs).unref());
        });
      this.loops.add(run);
    };
    tick();
  }

  /** Hands new feed positions to lanes and queues those lanes. */
  async dispatch(): Promise<void> {
    for (const webhookId of await this.deps.store.webhooks.listBehind(100)) {
      for (;;) {
        const lanes = await this.deps.store.webhooks.dispatch(webhookId, { now: this.deps.clock(), limit: this.settings.dispatchBatchSize });
        if (lanes.length === 0 || this.stopping) break;
        await this.deps.queue.enqueue(lanes);
      }
    }
  }

  /** Queues the lanes that are due. */
  async sweep(): Promise<void> {
    const due = await this.deps.store.webhooks.dueLanes({ now: this.deps.clock(), limit: 1000 });
    await this.deps.queue.enqueue(due);
  }

  /**
   * Sends the dead letters asked for again, each once per claim, if the principal may still read its
   * repository (else it is dead again at once); a failure waits, then is dead again after its tries.
   */
  async redeliver(): Promise<void> {
    const claimed = await this.deps.store.webhooks.claimRedeliveries({ now: this.deps.clock(), leaseMs: this.settings.leaseMs, limit: 50 });
    await Promise.all(claimed.map((r) => this.redeliverOne(r)));
  }

  private async redeliverOne({ deadLetter, notification, webhook, inboxAckSeq }: WebhookRedelivery): Promise<void> {
    let mayRead: boolean;
    try {
      mayRead = await principalMayRead(this.deps.core, webhook, notification.repositoryId);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // Core cannot say: the claim lapses and the redelivery is tried again then.
      this.deps.logger.warn({ code: err.code, webhookId: webhook.webhookId }, 'webhook redelivery waits for core');
      return;
    }
    if (!mayRead) {
      await this.deps.store.webhooks.failRedelivery(deadLetter.deliveryId, { error: 'the principal may not read the repository now', retryAt: this.deps.clock(), maxAttempts: 0 });
      return;
    }
    const content = deliveryContent(this.deps.cursors, webhook, notification, inboxAckSeq);
    const result = await this.deps.sender.send({ url: webhook.url, secret: webhook.secret, ...content });
    if (result.delivered) {
      await this.deps.store.webhooks.completeRedelivery(deadLetter.deliveryId);
      this.deps.observe?.('redelivered');
      return;
    }
    const retryAt = new Date(this.deps.clock().getTime() + retryDelayMs(this.settings.retry, deadLetter.redeliveryAttempts + 1));
    const { dead } = await this.deps.store.webhooks.failRedelivery(deadLetter.deliveryId, { error: result.error, retryAt, maxAttempts: this.settings.retry.maxAttempts });
    if (dead) this.deps.logger.warn({ webhookId: webhook.webhookId, deliveryId: deadLetter.deliveryId, error: result.error }, 'webhook redelivery failed its tries; dead again');
  }
}
