import { ChatApiError, type AcknowledgeInboxRequest, type AcknowledgeInboxResponse, type ChatClient } from '@chat/client';

/**
 * What an acknowledger moves: one repository's inbox checkpoint, or the feed's checkpoint across all
 * of a bot's repositories. Both answer the same acknowledgement rules.
 */
export interface CheckpointEndpoint {
  acknowledge(body: AcknowledgeInboxRequest): Promise<AcknowledgeInboxResponse>;
  /** The checkpoint as the service has it now (null: nothing acknowledged yet). */
  read(): Promise<string | null>;
}

/** A repository inbox's checkpoint. */
export function repositoryInboxCheckpoint(client: ChatClient, repositoryId: string): CheckpointEndpoint {
  return {
    acknowledge: (body) => client.acknowledgeRepositoryInbox(repositoryId, body),
    read: async () => (await client.listRepositoryInbox(repositoryId, { limit: 1 })).acknowledgedCursor ?? null,
  };
}

/** The checkpoint of the bot's feed: its notifications across every repository it may read. */
export function principalInboxCheckpoint(client: ChatClient): CheckpointEndpoint {
  return {
    acknowledge: (body) => client.acknowledgePrincipalInbox(body),
    read: async () => (await client.listPrincipalInbox({ limit: 1 })).acknowledgedCursor ?? null,
  };
}

/**
 * A checkpoint (one inbox's or the feed's), moved forward in batches: after `every` handled notifications, at
 * least every `intervalMs`, and on `flush()` (at stop). Each acknowledgement is a compare-and-set
 * (`expectedCursor` = the checkpoint this bot last saw), so a bot never moves a checkpoint it does
 * not know; when it is stale (another instance of the bot moved it, or an earlier acknowledgement
 * was applied but its answer lost) the current checkpoint is read and the acknowledgement sent once
 * more against it: one at or behind the checkpoint comes back `replayed`, which is fine.
 */
export class CheckpointAcknowledger {
  private pending: string | undefined;
  private unacknowledged = 0;
  private chain: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly endpoint: CheckpointEndpoint,
    /** The checkpoint read at start (null: nothing acknowledged yet). */
    private checkpoint: string | null,
    private readonly options: { every: number; intervalMs: number; onError: (error: unknown) => void },
  ) {
    this.timer = setInterval(() => {
      this.flush().catch(options.onError);
    }, options.intervalMs);
    this.timer.unref();
  }

  /** The checkpoint as last confirmed by the API. */
  get acknowledged(): string | null {
    return this.checkpoint;
  }

  /** Records a handled notification; acknowledges when the batch is full. */
  async handled(cursor: string): Promise<void> {
    this.pending = cursor;
    this.unacknowledged += 1;
    if (this.unacknowledged >= this.options.every) await this.flush();
  }

  /** Acknowledges through the last handled notification, if that is not acknowledged yet. */
  flush(): Promise<void> {
    // One acknowledgement at a time, in order: the timer and a full batch may ask together.
    const run = this.chain.then(() => this.send());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Stops the timer; call `flush()` first to acknowledge what is handled. */
  close(): void {
    clearInterval(this.timer);
  }

  private async send(): Promise<void> {
    const through = this.pending;
    if (through === undefined || through === this.checkpoint) return;
    const count = this.unacknowledged;
    let result;
    try {
      result = await this.endpoint.acknowledge({ throughCursor: through, expectedCursor: this.checkpoint });
    } catch (err) {
      if (!(err instanceof ChatApiError && err.code === 'INBOX_CHECKPOINT_STALE')) throw err;
      const current = await this.endpoint.read();
      result = await this.endpoint.acknowledge({ throughCursor: through, expectedCursor: current });
    }
    this.checkpoint = result.acknowledgedCursor;
    // Notifications handled while this request was in flight stay counted for the next one.
    this.unacknowledged = Math.max(0, this.unacknowledged - count);
    if (this.pending === through) this.pending = result.acknowledgedCursor;
  }
}
