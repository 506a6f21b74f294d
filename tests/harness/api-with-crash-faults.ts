/**
 * A test-only entry point: the standalone API, built through the same composition root as
 * `services/api/src/main.ts`, that SIGKILLs itself at one chosen point of one append, so the crash
 * tests (reliability test 3) can show that the outbox relay and idempotent retries cover it.
 *
 * `CHAT_TEST_CRASH_AFTER` (read here only, never by a service) picks the point:
 * - `commit:N`: the Nth message this process commits is handed to the publisher, and the process dies
 *   before publishing it (between commit and publish);
 * - `publish:N`: the Nth message is published, and the process dies before any later response leaves,
 *   its own included (between publish and response).
 */
import type { RequestListener } from 'node:http';
import type { CommittedMessagePublisher } from '@chat/api';
import { loadApiConfig, startApiService } from '@chat/api';
import { createLogger } from '@chat/observability';
import { loadConfigOrExit } from '@chat/service-config';

const setting = /^(commit|publish):([1-9][0-9]*)$/.exec(process.env.CHAT_TEST_CRASH_AFTER ?? '');
if (!setting) {
  process.stderr.write('CHAT_TEST_CRASH_AFTER must be commit:N or publish:N\n');
  process.exit(2);
}
const point = setting[1] as 'commit' | 'publish';
const nth = Number(setting[2]);
const crash = () => process.kill(process.pid, 'SIGKILL');

let committed = 0;
/** Set once the Nth message's publish was started (publish point): every response waits for it, then the process dies. */
let crashWhenPublished: Promise<void> | undefined;

const decoratePublisher = (inner: CommittedMessagePublisher): CommittedMessagePublisher => ({
  publishCommitted(entry) {
    committed += 1;
    if (committed !== nth) return inner.publishCommitted(entry);
    if (point === 'commit') crash();
    const published = inner.publishCommitted(entry);
    crashWhenPublished = published;
    return published;
  },
});

// The append answers without waiting for its publish; holding every response back once the Nth
// publish started keeps that message's 201 from leaving before the crash.
const decorateListener = (inner: RequestListener): RequestListener => (req, res) => {
  const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
  res.end = ((...args: unknown[]) => {
    if (!crashWhenPublished) return end(...args);
    void crashWhenPublished.then(crash);
    return res;
  }) as typeof res.end;
  inner(req, res);
};

const config = loadConfigOrExit(() => loadApiConfig(process.env));
const logger = createLogger({ name: 'chat-api-crash-test', level: config.log.level });
const service = await startApiService(config, logger, { decoratePublisher, decorateListener });
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void service.shutdown().then(() => process.exit(0)));
