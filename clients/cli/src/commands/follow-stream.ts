import { ChatStreamError, type ChatEventStream, type StreamStatus } from '@chat/client';
import type { CliContext, ClientContext } from '../cli-context.ts';

/**
 * Prints every event of a resumable stream until Ctrl-C (or SIGTERM), then tells on stderr the
 * command that goes on from the last printed event. The SDK consumer reconnects by itself (backoff,
 * `handoff`, `reauthorize`); when it stops for good, the same resume hint precedes the error.
 */
export async function followStream<E extends { type: string; id: string }>(
  ctx: ClientContext,
  open: (onStatus: (status: StreamStatus) => void) => ChatEventStream<E>,
  print: (event: E) => void,
  resumeCommand: (cursor: string) => string,
  startCursor: string | undefined,
): Promise<void> {
  let last = startCursor;
  const stream = open((status) => {
    if (status.state === 'backoff') ctx.printer.hint(`connection lost (${status.reason}); reconnecting in ${status.delayMs ?? 0} ms`);
  });
  const removeInterrupt = ctx.io.onInterrupt(() => stream.close());
  try {
    for await (const event of stream) {
      print(event);
      last = event.id;
    }
  } catch (err) {
    if (err instanceof ChatStreamError && last !== undefined) ctx.printer.hint(`resume with: ${resumeCommand(last)}`);
    throw err;
  } finally {
    removeInterrupt();
  }
  ctx.printer.hint(last === undefined ? 'stopped before any event' : `resume with: ${resumeCommand(last)}`);
}

/** The scope flags of a resume hint, so the printed command names the same room or inbox. */
export function scopeFlags(ctx: CliContext): string {
  return `--repository ${ctx.repositoryId}${ctx.room.branchId ? ` --branch ${ctx.room.branchId}` : ''}`;
}
