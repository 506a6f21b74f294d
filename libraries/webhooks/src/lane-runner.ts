import type { CoreClient } from '@chat/authz-client';
import { AppError, type CursorCodec } from '@chat/contracts';
import type { Logger } from '@chat/observability';
import type { Store, WebhookLaneKey, WebhookLaneWork } from '@chat/store';
import { deliveryContent } from './delivery-body.ts';
import type { LaneRunOutcome } from './lane-queue.ts';
import { principalMayRead } from './read-access.ts';
import { retryDelayMs, type RetryPolicy } from './retry-backoff.ts';
import type { WebhookSender } from './webhook-sender.ts';

export interface LaneRunnerDeps {
  store: Store;
  core: CoreClient;
  cursors: CursorCodec;
  sender: WebhookSender;
  logger: Logger;
  clock: () => Date;
  /** Told of every delivery's outcome (metrics). */
  observe?: (outcome: DeliveryOutcome) => void;
}

export type DeliveryOutcome = 'delivered' | 'failed' | 'dead' | 'skipped';

export interface LaneRunnerSettings {
  retry: RetryPolicy;
  /** Notifications read per claim of a lane. */
  batchSize: number;
  /** How long a claim keeps others off the lane; renewed before a send that could outlast it, so more than one send's longest. */
  leaseMs: number;
  /** When core cannot say whether the principal may read the repository, the lane waits this long. */
  authorizationRetryMs: number;
}

/**
 * Runs one lane: delivers its inbox's notifications in seq order, each until the receiver answers
 * 2xx or its attempts run out (then it is dead-lettered and the lane goes on), and stops at a
 * failed one to retry it later. Before each batch it asks core, live, whether the webhook's principal
 * may still read the repository: if not, the batch is passed over undelivered (a revoked grant stops
 * the repository's deliveries; the others go on).
 */
export class LaneRunner {
  constructor(
    private readonly deps: LaneRunnerDeps,
    private readonly settings: LaneRunnerSettings,
  ) {}

  async run(key: WebhookLaneKey): Promise<LaneRunOutcome> {
    for (;;) {
      const work = await this.deps.store.webhooks.claimLane(key, { now: this.deps.clock(), leaseMs: this.settings.leaseMs, limit: this.settings.batchSize });
      // Held by another run (which goes on to the end), or waiting for its retry (its job is queued).
      if (!work) return { kind: 'settled' };
      const position = new LanePosition(this.deps, key, work.lane.deliveredSeq, work.lane.nextAttemptAt, this.settings.leaseMs);
      if (work.notifications.length > 0) {
        const outcome = await this.runBatch(key, work, position);
        if (outcome) return outcome;
      }
      // Run again while notifications arrived as this batch was sent: they go out now, not at the
      // next sweep (a queue may drop a lane's job while one runs).
      if (!(await position.release(this.deps.clock()))) return { kind: 'settled' };
    }
  }

  /** Delivers one claimed batch; returns the outcome when the lane must wait, else undefined. */
  private async runBatch(key: WebhookLaneKey, work: WebhookLaneWork, position: LanePosition): Promise<LaneRunOutcome | undefined> {
    const { webhook, lane } = work;
    let mayRead: boolean;
    try {
      mayRead = await principalMayRead(this.deps.core, webhook, work.notifications[0]!.repositoryId);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const at = new Date(this.deps.clock().getTime() + this.settings.authorizationRetryMs);
      this.deps.logger.warn({ code: err.code, webhookId: key.webhookId }, 'webhook lane waits for core');
      await this.deps.store.webhooks.releaseLane(key, at);
      return { kind: 'again', at };
    }
    let attempts = lane.attempts;
    for (const notification of work.notifications) {
      if (!mayRead) {
        position.passed(notification.seq);
        this.deps.observe?.('skipped');
        continue;
      }
      await position.holdFor(this.deps.sender.longestSendMs);
      const content = deliveryContent(this.deps.cursors, webhook, notification, work.inboxAckSeq);
      const result = await this.deps.sender.send({ url: webhook.url, secret: webhook.secret, ...content });
      if (result.delivered) {
        position.passed(notification.seq);
        this.deps.observe?.('delivered');
        attempts = 0;
        continue;
      }
      // The failure is the head's: the lane's recorded position must be just before it.
      await position.record();
      const now = this.deps.clock();
      const retryAt = new Date(now.getTime() + retryDelayMs(this.settings.retry, attempts + 1));
      attempts = await this.deps.store.webhooks.recordFailure(key, { error: result.error, retryAt });
      if (attempts < this.settings.retry.maxAttempts) {
        this.deps.observe?.('failed');
        this.deps.logger.info({ webhookId: webhook.webhookId, deliveryId: content.deliveryId, attempts, error: result.error }, 'webhook delivery failed; will retry');
        return { kind: 'again', at: retryAt };
      }
      await this.deps.store.webhooks.deadLetter(key, { notification, deliveryId: content.deliveryId, attempts, error: result.error, now });
      position.recorded(notification.seq);
      this.deps.observe?.('dead');
      this.deps.logger.warn({ webhookId: webhook.webhookId, deliveryId: content.deliveryId, attempts, error: result.error }, 'webhook delivery dead-lettered');
      attempts = 0;
    }
    return undefined;
  }
}

/**
 * A claimed lane's position as this run moves it: written to the store once per batch rather than
 * once per POST, which keeps a busy lane's cost per delivery to the POST itself. It is written
 * before a failure is recorded (the failure belongs to the notification just after it), with the
 * lane's release at the batch's end, and before a POST that could outlast the claim (writing it
 * renews the claim). A run
 * that dies in between leaves the lane where it was last written, and whoever takes it over sends
 * the notifications after that again, under their delivery IDs.
 */
class LanePosition {
  private written: number;
  private reached: number;

  constructor(
    private readonly deps: Pick<LaneRunnerDeps, 'store' | 'clock'>,
    private readonly key: WebhookLaneKey,
    deliveredSeq: number,
    private heldUntil: Date,
    private readonly leaseMs: number,
  ) {
    this.written = deliveredSeq;
    this.reached = deliveredSeq;
  }

  /** The notification at `seq` is done with (delivered or passed over). */
  passed(seq: number): void {
    this.reached = Math.max(this.reached, seq);
  }

  /** The store already holds the lane at `seq` (a dead letter moved it there). */
  recorded(seq: number): void {
    this.passed(seq);
    this.written = Math.max(this.written, seq);
  }

  /** Writes the position first when the claim could lapse within `ms`; writing it renews the claim. */
  async holdFor(ms: number): Promise<void> {
    const now = this.deps.clock().getTime();
    if (now + ms < this.heldUntil.getTime() || this.reached === this.written) return;
    await this.record(new Date(now + this.leaseMs));
  }

  /** Gives the lane back with the position reached; returns whether notifications wait after it. */
  async release(at: Date): Promise<boolean> {
    const more = await this.deps.store.webhooks.releaseLane(this.key, at, this.reached === this.written ? undefined : this.reached);
    this.written = this.reached;
    return more;
  }

  /** Writes the position reached, if it moved. */
  async record(holdUntil?: Date): Promise<void> {
    if (this.reached === this.written) return;
    await this.deps.store.webhooks.markDelivered(this.key, this.reached, holdUntil);
    this.written = this.reached;
    if (holdUntil) this.heldUntil = holdUntil;
  }
}
