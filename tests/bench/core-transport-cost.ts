/**
 * CPU per call to core's authorize endpoint, client side only: undici's `request` on a keep-alive
 * Agent (with the abort timer the core client needs) against the core transport's own HTTP/1.1
 * client. dev-core runs in its own process, so this process's CPU (process.cpuUsage) is the client's.
 * Each side runs twice, alternating, because the machine's cores are shared and noisy.
 *
 *   pnpm --filter @chat/tests exec tsx --conditions=@chat/source bench/core-transport-cost.ts [calls]
 */
import { createCoreTransport, type CoreTransport } from '@chat/authz-client';
import { DEVELOPMENT_SERVICE_TOKEN } from '@chat/service-config';
import { Agent, request } from 'undici';
import { startDevCoreProcess } from '../harness/dev-core-process.ts';

const CALLS = Number(process.argv[2] ?? 20_000);
const WARMUP_CALLS = 2_000;
const CONCURRENCY = 16;
const TIMEOUT_MS = 2000;
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** What the core client sends for one authorization (dev-core's demo fixture: Alice reads a repository). */
const AUTHORIZE_BODY = JSON.stringify({
  principal: { kind: 'user', id: 'u_alice', tokenId: 'jti-u_alice', clientId: 'dev-core-demo-app' },
  repositoryId: '01JGFJJZ00QNYBVPQTAT49MN0F',
  action: 'read',
});
const HEADERS = {
  authorization: `Bearer ${DEVELOPMENT_SERVICE_TOKEN}`,
  'content-type': 'application/json',
  accept: 'application/json',
  'x-request-id': '01JGFJJZ00QNYBVPQTAT49MN0F',
};

/** The undici call path the core client used: `request` on a keep-alive Agent, a timer-driven abort, the body read by async iteration. */
function undiciTransport(): CoreTransport {
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 128 });
  return {
    async send(url, init) {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error(`core did not answer within ${init.timeoutMs} ms`)), init.timeoutMs);
      try {
        const response = await request(url, { method: init.method, headers: init.headers, body: init.body, signal: abort.signal, dispatcher });
        const declared = Number(response.headers['content-length'] ?? 0);
        if (declared > init.maxResponseBytes) {
          response.body.destroy();
          throw new Error(`core answer of ${declared} bytes`);
        }
        const chunks: Buffer[] = [];
        let length = 0;
        for await (const chunk of response.body) {
          length += (chunk as Buffer).length;
          if (length > init.maxResponseBytes) {
            response.body.destroy();
            throw new Error(`core answer over ${init.maxResponseBytes} bytes`);
          }
          chunks.push(chunk as Buffer);
        }
        return { status: response.statusCode, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8') };
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => dispatcher.close(),
  };
}

interface Figure {
  cpuMicrosPerCall: number;
  wallSeconds: number;
}

/** `calls` authorize calls, `concurrency` at a time; CPU of this process per call. */
async function measure(transport: CoreTransport, url: URL, calls: number, concurrency: number): Promise<Figure> {
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      next++;
      const answer = await transport.send(url, { method: 'POST', headers: HEADERS, body: AUTHORIZE_BODY, timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_RESPONSE_BYTES });
      if (answer.status !== 200) throw new Error(`dev-core answered ${answer.status}: ${answer.text}`);
    }
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(cpu);
  return { cpuMicrosPerCall: (used.user + used.system) / calls, wallSeconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const devCore = await startDevCoreProcess();
  try {
    const url = new URL(`${devCore.url}/internal/v1/authorize`);
    const sides = { undici: undiciTransport(), own: createCoreTransport() };
    const sample = await sides.own.send(url, { method: 'POST', headers: HEADERS, body: AUTHORIZE_BODY, timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_RESPONSE_BYTES });
    console.log(`authorize answer: ${sample.status}, ${Buffer.byteLength(sample.text)} bytes; ${CALLS} calls per figure`);
    for (const transport of Object.values(sides)) await measure(transport, url, WARMUP_CALLS, CONCURRENCY);
    const results: Record<string, Record<string, Figure[]>> = { sequential: { undici: [], own: [] }, [`${CONCURRENCY} concurrent`]: { undici: [], own: [] } };
    for (let round = 1; round <= 2; round++) {
      for (const [mode, concurrency] of [['sequential', 1], [`${CONCURRENCY} concurrent`, CONCURRENCY]] as const) {
        for (const [name, transport] of Object.entries(sides)) {
          const figure = await measure(transport, url, CALLS, concurrency);
          results[mode]![name]!.push(figure);
          console.log(`round ${round} ${mode.padEnd(13)} ${name.padEnd(6)} ${figure.cpuMicrosPerCall.toFixed(1).padStart(6)} µs CPU/call  ${(CALLS / figure.wallSeconds).toFixed(0).padStart(6)} calls/s`);
        }
      }
    }
    for (const [mode, byName] of Object.entries(results)) {
      const best = (name: string) => Math.min(...byName[name]!.map((f) => f.cpuMicrosPerCall));
      console.log(`${mode}: undici ${best('undici').toFixed(1)} µs, own ${best('own').toFixed(1)} µs CPU per call (best of 2); saves ${(best('undici') - best('own')).toFixed(1)} µs per call`);
    }
    await Promise.all(Object.values(sides).map((t) => t.close()));
  } finally {
    await devCore.stop();
  }
}

await main();
