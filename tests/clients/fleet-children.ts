/**
 * What the fleet tests read of the children they start (the bot, the webhook receiver) and how they
 * kill them. Each child writes one line per handled mention:
 * `handled <id> <repositoryId> <ms from the mention's commit to the handler> <epoch ms> created|replayed`,
 * where `<id>` is the notification's ID (stream mode) or the delivery's (webhook mode).
 */
import { once } from 'node:events';
import type { ChildService } from '../harness/child-service.ts';

export interface Handled {
  id: string;
  repositoryId: string;
  ageMs: number;
  at: number;
  created: boolean;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The `handled` lines of `text`. */
export function handledLines(text: string): Handled[] {
  return [...text.matchAll(/^handled (\S+) (\S+) (-?\d+) (\d+) (created|replayed)$/gm)].map((m) => ({
    id: m[1]!,
    repositoryId: m[2]!,
    ageMs: Number(m[3]),
    at: Number(m[4]),
    created: m[5] === 'created',
  }));
}

/**
 * Hands each `handled` line of `child`'s output to `onHandled` as it comes, read from its stdout
 * itself: ChildService keeps only the last 64 KiB of a child's output.
 */
export function followHandled(child: ChildService, onHandled: (handled: Handled[]) => void): void {
  let partial = '';
  child.process.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop()!;
    const parsed = handledLines(lines.join('\n'));
    if (parsed.length > 0) onHandled(parsed);
  });
}

/** SIGKILLs a child that is still running, and waits for its exit. */
export async function sigkill(child: ChildService): Promise<void> {
  if (child.hasExited) throw new Error(`a process exited by itself:\n${child.log}`);
  const exited = once(child.process, 'exit');
  child.process.kill('SIGKILL');
  await exited;
}
