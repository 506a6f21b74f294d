import { randomBytes } from 'node:crypto';
import { CursorCodec } from '@chat/contracts';
import type { ServiceKeyRepository } from './service-key.repository.ts';

const CURSOR_KEY_NAME = 'cursor-hmac-v1';

/**
 * The cursor codec every instance shares. A configured secret wins; without one, the first instance
 * to start makes a random secret and keeps it in the database, so all instances accept each other's
 * cursors. Previous secrets keep cursors made before a rotation valid.
 */
export async function loadCursorCodec(
  serviceKeys: ServiceKeyRepository,
  config: { secret?: string | undefined; previousSecrets?: string[] },
): Promise<CursorCodec> {
  const current = config.secret ?? (await serviceKeys.getOrCreate(CURSOR_KEY_NAME, () => randomBytes(32).toString('base64url')));
  return new CursorCodec({ current, previous: config.previousSecrets ?? [] });
}
