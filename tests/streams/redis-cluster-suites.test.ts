import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { testConfig } from '../harness/test-config.ts';
import { testRedisKind } from '../harness/test-redis.ts';

/**
 * A representative subset of the stream, inbox and rate-limit suites, run unchanged with their
 * services on a Redis Cluster (3 masters, 3 replicas): stream caps over two gateways (leases),
 * inbox stream caps, SSE framing in replay and live, and the shared append rate window. The whole
 * suites run on a Cluster with CHAT_TEST_REDIS=cluster (docs/operations.md).
 */
const SUBSET = [
  'streams/stream-caps-with-killed-gateway.test.ts',
  'streams/inbox-stream-cap-with-killed-gateway.test.ts',
  'streams/sse-framing.test.ts',
  'rest/rate-limit.test.ts',
];

describe('the stream, inbox and rate-limit suites on a Redis Cluster (a representative subset)', function () {
  this.timeout(400_000);

  it(`${SUBSET.join(', ')} pass with CHAT_TEST_REDIS=cluster`, async function () {
    // A run that is on a Cluster already runs these files there itself.
    if (testRedisKind === 'cluster') this.skip();
    const args = ['exec', 'mocha', '--no-config', '--node-option', 'import=tsx', '--require', 'harness/root-hooks.ts', '--timeout', '90000', '--exit', ...SUBSET];
    const child = spawn('pnpm', args, {
      cwd: `${testConfig.repoRoot}tests`,
      env: { ...process.env, CHAT_TEST_REDIS: 'cluster' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    const summary = /(\d+) passing[\s\S]*/.exec(output)?.[0] ?? output.slice(-4000);
    expect(code, summary).to.equal(0);
    expect(output).to.match(/\d+ passing/);
    expect(output, 'no test skipped or failed').to.not.match(/\d+ (failing|pending)/);
  });
});
