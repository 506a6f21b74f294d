import { expect } from 'chai';
import { createRoutePipeline } from '@chat/http-kit';
import { pino } from 'pino';
import { HeadGenerator } from '../../test/request-head-cases.ts';
import { nodeVerdict, type NodeVerdict } from '../../test/node-request-verdict.ts';
import type { GatewayDeps } from '../deps.ts';
import type { StreamHub } from '../domain/stream-hub.ts';
import { createGatewayMetrics } from '../metrics.ts';
import { gatewayRoutes } from '../routes/gateway-routes.ts';
import { readFirstRequest, type FirstRequest } from './first-request.ts';

const CASES = 100_000;
const MAX_HEAD_BYTES = 16 * 1024;
const SEED = Number(process.env.FRONT_FUZZ_SEED ?? 20261127);

/**
 * The gateway's own route table; the front's decision reads only its paths, so the parts that would
 * serve a request are left out.
 */
const deps = { logger: pino({ level: 'silent' }), engine: { metrics: createGatewayMetrics(() => undefined, { defaultMetrics: false }) }, tokens: {}, core: {} } as unknown as GatewayDeps;
const { isStreamRoute } = createRoutePipeline([gatewayRoutes(deps, {} as StreamHub)]);

/** How the front's decision disagrees with Node's verdict, or undefined when it does not. */
function disagreement(front: FirstRequest, node: NodeVerdict): string | undefined {
  if (front.kind === 'hand-over') return undefined;
  if (front.kind === 'incomplete') return node.kind === 'waiting' ? undefined : `the front waits; Node: ${JSON.stringify(node)}`;
  if (node.kind !== 'head') return `the front serves; Node: ${JSON.stringify(node)}`;
  const { request } = node;
  if (request.outcome !== 'request' || !request.alone || request.upgrade) return `the front serves; Node: ${JSON.stringify({ ...request, rawHeaders: request.rawHeaders.length })}`;
  if (request.method !== 'GET' || request.versionMajor !== 1 || request.versionMinor !== 1) return `the front serves; Node reads ${request.method} HTTP/${request.versionMajor}.${request.versionMinor}`;
  if (request.url !== front.head.target) return `targets differ: ${JSON.stringify(front.head.target)} / ${JSON.stringify(request.url)}`;
  const nodeHeaders: Record<string, string> = {};
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!.toLowerCase();
    if (name in nodeHeaders) return `the front serves; Node reads ${name} twice`;
    nodeHeaders[name] = request.rawHeaders[i + 1]!;
  }
  const frontHeaders = { ...front.head.headers };
  if (JSON.stringify(Object.entries(frontHeaders).sort()) !== JSON.stringify(Object.entries(nodeHeaders).sort())) {
    return `headers differ: ${JSON.stringify(frontHeaders).slice(0, 300)} / ${JSON.stringify(nodeHeaders).slice(0, 300)}`;
  }
  return undefined;
}

describe('the stream front’s request reading against Node’s parser (differential fuzz)', function () {
  this.timeout(300_000);

  it(`decides ${CASES.toLocaleString('en-US')} generated and mutated request heads, in the writes they arrive in, as Node’s parser would`, () => {
    const generator = new HeadGenerator(SEED);
    const counts = { serve: 0, 'hand-over': 0, incomplete: 0 };
    const nodeCounts: Record<string, number> = {};
    const failures: string[] = [];
    for (let n = 0; n < CASES; n++) {
      const { pieces } = generator.next();
      let read = Buffer.alloc(0);
      let front: FirstRequest = { kind: 'incomplete' };
      for (const piece of pieces) {
        read = Buffer.concat([read, piece]);
        front = readFirstRequest(read, isStreamRoute, MAX_HEAD_BYTES);
        if (front.kind !== 'incomplete') break;
      }
      const node = nodeVerdict(read, MAX_HEAD_BYTES);
      counts[front.kind]++;
      const nodeKey = node.kind === 'head' ? node.request.outcome : node.kind === 'error' ? node.code : node.kind;
      nodeCounts[nodeKey] = (nodeCounts[nodeKey] ?? 0) + 1;
      const why = disagreement(front, node);
      if (why && failures.length < 20) failures.push(`case ${n} (seed ${SEED}) ${JSON.stringify(read.toString('latin1').slice(0, 400))} in ${pieces.length} writes: ${why}`);
    }
    console.log(`      ${CASES.toLocaleString('en-US')} heads: served ${counts.serve}, handed over ${counts['hand-over']}, waiting ${counts.incomplete}; Node: ${JSON.stringify(nodeCounts)}`);
    expect(failures, failures.join('\n')).to.deep.equal([]);
    // A fuzz that never serves or never waits would check nothing on those sides.
    expect(counts.serve).to.be.above(CASES / 10);
    expect(counts.incomplete).to.be.above(CASES / 100);
  });
});
