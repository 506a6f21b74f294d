import { CheckpointAcknowledger, principalInboxCheckpoint } from './checkpoint-acknowledger.ts';
import { HandledPrefix } from './handled-prefix.ts';
import { handleNotification, type HandlingDeps } from './notification-handling.ts';

/** How a feed worker spreads its handlers. */
export interface FeedConcurrency {
  /** Handlers running at once, each for a different repository. */
  handlers: number;
  /** Notifications taken from the stream and not yet handled before reading pauses. */
  ahead: number;
}

/**
 * The bot's feed: its notifications across every repository where it holds a grant, in one stream,
 * so a bot installed on a thousand repositories holds one connection for them all, and a grant
 * added or revoked while it runs is followed by the service. Each notification comes with its
 * message (`include=message`), so handling one reads nothing more: a busy repository's
 * notifications, handled one at a time, wait only for the handler. A repository's notifications are
 * handled one at a time in feed order; different repositories' run side by side, at most
 * `concurrency.handlers` at once. The feed's checkpoint moves through the longest run of handled
 * notifications from its start, so after a crash the next run starts where that run ends and
 * handles again only notifications whose replies carry the same keys (not stored twice).
 * Resolves when `stopping` aborts (after the handlers in hand and a final acknowledgement); rejects
 * when a handler's run fails for good (a refused token, say), after the others settle.
 */
export async function runFeedWorker(deps: HandlingDeps, concurrency: FeedConcurrency, stopping: AbortSignal): Promise<void> {
  const endpoint = principalInboxCheckpoint(deps.client);
  const checkpoint = await endpoint.read().catch((err: unknown) => {
    if (stopping.aborted) return null;
    throw err;
  });
  if (stopping.aborted) return;
  const acknowledger = new CheckpointAcknowledger(endpoint, checkpoint, {
    ...deps.ack,
    onError: (error) => deps.logger.warn?.('feed acknowledgement failed; it is sent again with the next batch', { error: String(error) }),
  });
  deps.logger.info?.('feed worker started', { checkpoint });
  const stream = deps.client.streamPrincipalInbox({ lastEventId: checkpoint, includeMessage: true }, deps.stream);
  // A failure of one repository's handling ends the whole run, as one worker's does in list mode.
  const failing = new AbortController();
  const halt = () => {
    failing.abort();
    stream.close();
  };
  stopping.addEventListener('abort', halt, { once: true });
  const prefix = new HandledPrefix();
  const lanes = new Map<string, Promise<void>>();
  const slots = new Slots(concurrency.handlers);
  let failure: { error: unknown } | undefined;
  try {
    for await (const event of stream) {
      const entry = prefix.add(event.id);
      const repositoryId = event.data.repositoryId;
      const lane = (lanes.get(repositoryId) ?? Promise.resolve())
        .then(async () => {
          if (failing.signal.aborted) return;
          const handled = await slots.run(() => handleNotification(deps, event.data, stopping));
          // One cut short by a stop stays unacknowledged, and so does everything after it.
          if (!handled) return;
          const through = prefix.complete(entry);
          if (through !== undefined) await acknowledger.handled(through);
        })
        .catch((error: unknown) => {
          failure ??= { error };
          halt();
        });
      lanes.set(repositoryId, lane);
      void lane.then(() => {
        if (lanes.get(repositoryId) === lane) lanes.delete(repositoryId);
      });
      await prefix.below(concurrency.ahead, failing.signal);
      if (failing.signal.aborted) break;
    }
  } finally {
    stopping.removeEventListener('abort', halt);
    stream.close();
    await Promise.allSettled([...lanes.values()]);
    acknowledger.close();
    await acknowledger.flush();
  }
  if (failure) throw failure.error;
}

/** At most `size` tasks at once; the others wait their turn in order. */
class Slots {
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.running += 1;
    try {
      return await task();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
