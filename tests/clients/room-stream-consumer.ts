/**
 * An SDK room consumer as the README writes one, run as a child process by the restart test
 * (`restart-under-clients.test.ts`): `streamRoom` from the room's start, its token read from
 * CHAT_TOKEN_FILE whenever the service refuses the one it has. One stdout line per message event,
 * `{"id":<event id>,"data":<the message>}`; every state change on stderr; `stopped` on stdout after
 * SIGTERM closed the stream. A stream that stops by itself (a refused token, say) exits 1 naming why.
 *
 * Environment: CHAT_URL, CHAT_TOKEN_FILE, CHAT_REPOSITORY.
 */
import { readFile } from 'node:fs/promises';
import { ChatClient } from '@chat/client';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const tokenFile = env('CHAT_TOKEN_FILE');

const client = new ChatClient({ baseUrl: env('CHAT_URL'), token: () => readFile(tokenFile, 'utf8') });
const stream = client.streamRoom(
  { repositoryId: env('CHAT_REPOSITORY') },
  { onStatus: (s) => process.stderr.write(`${s.state} ${s.reason}${s.error ? ` ${s.error.message}` : ''}\n`) },
);
process.once('SIGTERM', () => stream.close());

try {
  for await (const event of stream) process.stdout.write(`${JSON.stringify({ id: event.id, data: event.data })}\n`);
  process.stdout.write('stopped\n');
} catch (err) {
  process.stderr.write(`consumer stopped: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
