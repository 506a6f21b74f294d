import { createHash } from 'node:crypto';
import type { WebhookLaneKey } from '@chat/store';
import { Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { LaneHandler, LaneQueue } from './lane-queue.ts';

export interface BullmqLaneQueueOptions {
  /** A connection factory: BullMQ's queue and worker each need their own (the worker's blocks). */
  connect: () => ConnectionOptions;
  /** The key prefix; `{…}` makes every key of the queue one Cluster hash slot, as BullMQ needs. */
  prefix: string;
  concurrency: number;
  onError: (err: unknown) => void;
}

const QUEUE_NAME = 'webhook-lanes';

/**
 * A lane's job ID: one waiting job per lane (BullMQ ignores an add whose ID is taken). BullMQ's
 * custom IDs may not hold `:`, which inbox keys do, so the key is hashed; the job's data carries it.
 */
function laneJobId(key: WebhookLaneKey): string {
  return `${key.webhookId}.${createHash('sha256').update(key.inboxKey).digest('base64url').slice(0, 22)}`;
}

/**
 * The {@link LaneQueue} on BullMQ: lane runs are jobs in Redis, taken by whichever notifier is free,
 * and a retry is a delayed job, kept in Redis across restarts. A job that throws (the store was
 * away) is retried by BullMQ with backoff; the store's sweep re-queues any lane a lost job leaves.
 */
export class BullmqLaneQueue implements LaneQueue {
  private readonly queue: Queue;
  private worker?: Worker;

  constructor(private readonly options: BullmqLaneQueueOptions) {
    this.queue = new Queue(QUEUE_NAME, { connection: options.connect(), prefix: options.prefix });
    this.queue.on('error', options.onError);
  }

  async enqueue(keys: readonly WebhookLaneKey[], delayMs = 0): Promise<void> {
    if (keys.length === 0) return;
    // A delayed run gets an ID of its own: the lane's plain ID may belong to the job running now.
    const at = Date.now() + delayMs;
    await this.queue.addBulk(
      keys.map((key) => ({
        name: 'lane',
        data: key,
        opts: {
          jobId: delayMs > 0 ? `${laneJobId(key)}.at${at}` : laneJobId(key),
          delay: delayMs,
          attempts: 5,
          backoff: { type: 'exponential', delay: 1000 },
          removeOnComplete: true,
          removeOnFail: true,
        },
      })),
    );
  }

  start(handler: LaneHandler): void {
    this.worker = new Worker(
      QUEUE_NAME,
      async (job: Job<WebhookLaneKey>) => {
        const outcome = await handler(job.data);
        if (outcome.kind === 'again') await this.enqueue([job.data], Math.max(1, outcome.at.getTime() - Date.now()));
      },
      {
        connection: this.options.connect(),
        prefix: this.options.prefix,
        concurrency: this.options.concurrency,
        // A SIGKILLed notifier's jobs are taken back within seconds, not BullMQ's default 30 s; the
        // store's lane lease still keeps a lane to one run at a time.
        lockDuration: 10_000,
        stalledInterval: 5000,
        maxStalledCount: 10,
      },
    );
    this.worker.on('error', this.options.onError);
  }

  async stop(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }
}
