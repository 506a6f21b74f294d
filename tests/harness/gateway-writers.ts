import type { MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import type { ApiClient, RoomScope } from './api-client.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Appends `count` messages one after another through alternating API processes, retrying a failed
 * request with the same key on the next process for up to `retryForMs` (long enough for a killed
 * API to come back); returns the messages the API acknowledged (201, or 200 on a retry). Failed
 * attempts are counted in `failed`.
 */
export async function writeMessages(apis: ApiClient[], scope: RoomScope, token: string, label: string, count: number, paceMs: number, retryForMs = 20_000, failed = { count: 0 }): Promise<MessageResponse[]> {
  const acknowledged: MessageResponse[] = [];
  for (let i = 0; i < count; i += 1) {
    const key = ulid();
    const started = Date.now();
    for (let attempt = 0; ; attempt += 1) {
      const api = apis[(i + attempt) % apis.length]!;
      const answer = await api.append<MessageResponse>(scope, token, { bodyMarkdown: `${label} #${i}` }, { key }).catch((err: Error) => err);
      if (!(answer instanceof Error) && (answer.status === 201 || answer.status === 200)) {
        acknowledged.push(answer.body);
        break;
      }
      failed.count += 1;
      if (Date.now() - started > retryForMs) throw new Error(`${label} #${i} never acknowledged: ${answer instanceof Error ? answer.message : `${answer.status} ${answer.text}`}`);
      await sleep(50);
    }
    const left = paceMs - (Date.now() - started);
    if (left > 0) await sleep(left);
  }
  return acknowledged;
}

