import { CheckpointAcknowledger, repositoryInboxCheckpoint } from './checkpoint-acknowledger.ts';
import { handleNotification, type HandlingDeps } from './notification-handling.ts';

/**
 * One repository's inbox, handled in order: reads the acknowledged checkpoint, streams the
 * notifications after it, runs the handler for each (one at a time) and acknowledges in batches.
 * After a crash the next run starts again at the checkpoint, so the notifications handled but not
 * yet acknowledged are handled again; their replies carry the same keys and are not stored twice.
 * Resolves when `stopping` aborts (after the handler in hand and a final acknowledgement).
 */
export async function runInboxWorker(deps: HandlingDeps, repositoryId: string, stopping: AbortSignal): Promise<void> {
  const { client } = deps;
  const checkpoint = (await client.listRepositoryInbox(repositoryId, { limit: 1, signal: stopping }).catch((err: unknown) => {
    if (stopping.aborted) return undefined;
    throw err;
  }))?.acknowledgedCursor;
  if (stopping.aborted) return;
  const acknowledger = new CheckpointAcknowledger(repositoryInboxCheckpoint(client, repositoryId), checkpoint ?? null, {
    ...deps.ack,
    onError: (error) => deps.logger.warn?.('acknowledgement failed; it is sent again with the next batch', { repositoryId, error: String(error) }),
  });
  deps.logger.info?.('inbox worker started', { repositoryId, checkpoint: checkpoint ?? null });
  const stream = client.streamInbox({ repositoryId, lastEventId: checkpoint ?? null }, deps.stream);
  const onStop = () => stream.close();
  stopping.addEventListener('abort', onStop, { once: true });
  try {
    for await (const event of stream) {
      const handled = await handleNotification(deps, event.data, stopping);
      // A notification whose handler was cut short by a stop stays unacknowledged: the next run handles it.
      if (!handled) break;
      await acknowledger.handled(event.id);
      if (stopping.aborted) break;
    }
  } finally {
    stopping.removeEventListener('abort', onStop);
    acknowledger.close();
    await acknowledger.flush();
  }
}
