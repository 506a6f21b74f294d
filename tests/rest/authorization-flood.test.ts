import { expect } from 'chai';
import { ApiClient, bearer, errorCode, roomPath, type ApiResponse } from '../harness/api-client.ts';
import { expectStatus } from '../harness/assertions.ts';
import { startCluster, type Cluster } from '../harness/cluster.ts';
import { residentBytes } from '../harness/gateway-cluster.ts';
import { burst } from '../harness/http-burst.ts';

/** The default. */
const CORE_TIMEOUT_MS = 2000;
/**
 * Generous: on a shared machine, answering 5,000 requests takes seconds of the service's CPU whatever
 * core does. So the margin is twice what a flood of 5,000 requests that never reach core (no token:
 * 401) takes, and 2 s more. Without the deadline and the cap, the last of 5,000 authorizations waits
 * for 20 rounds of 256 (4 calls in flight of 64 each), each ending at the timeout: 40 s.
 */
const marginMs = (coreFreeFloodMs: number) => coreFreeFloodMs * 2 + 2000;
const FLOOD = 5000;

/**
 * Security: while core is slow, a flood of reads from one account cannot make every other request
 * wait. An authorization is answered within the core timeout however long the queue in front of
 * it (503 AUTHORIZATION_UNAVAILABLE past it), and the queue of authorizations is capped.
 */
describe('security: authorization waits are bounded (API + dev-core processes)', function () {
  this.timeout(180_000);
  let cluster: Cluster;
  let api: ApiClient;

  before(async () => {
    // One account floods here, and what is under test is the queue all principals share: its
    // principal's own share (principal-fairness.test.ts) is raised to the queue's size.
    cluster = await startCluster(1, { CORE_TIMEOUT_MS: String(CORE_TIMEOUT_MS), CORE_AUTHORIZATIONS_PER_PRINCIPAL: '1024', LOG_LEVEL: 'warn' });
    api = cluster.nodes[0]!;
  });
  after(async () => {
    await cluster?.core.setFaults('ok').catch(() => undefined);
    await cluster?.stop();
  });

  it(`answers ${FLOOD} concurrent reads within the core timeout plus a margin while core is slow, with memory flat`, async () => {
    const { scenario, actors } = await cluster.scenario();
    const scope = { repositoryId: scenario.repositoryId };
    const reader = await actors.reader();
    expectStatus(await api.getRoom(scope, reader), 200);
    const pid = cluster.processes[0]!.service.pid!;
    const flood = () => burst(api, { method: 'GET', path: roomPath(scope), headers: bearer(reader) }, FLOOD);

    const coreFree = await burst(api, { method: 'GET', path: roomPath(scope) }, FLOOD);
    expect(coreFree.every((a) => a.response.status === 401)).to.equal(true);
    const coreFreeMs = Math.max(...coreFree.map((a) => a.ms));
    const bound = CORE_TIMEOUT_MS + marginMs(coreFreeMs);

    await cluster.core.setFaults('slow', CORE_TIMEOUT_MS * 3);
    const rss = [await residentBytes(pid)];
    for (let round = 1; round <= 3; round++) {
      const answers = await flood();
      rss.push(await residentBytes(pid));
      const slowest = Math.max(...answers.map((a) => a.ms));
      expect(slowest, `round ${round}: slowest of ${FLOOD} answers (ms; ${Math.round(coreFreeMs)} without core)`).to.be.below(bound);
      const byCode = countBy(answers.map((a) => a.response));
      expect(Object.keys(byCode), `round ${round}: ${JSON.stringify(byCode)}`).to.deep.equal(['AUTHORIZATION_UNAVAILABLE']);
      const messages = answers.map((a) => (a.response.body as { error: { message: string } }).error.message);
      expect(messages.some((m) => /already wait for the core service/.test(m)), 'some refused by the queue cap').to.equal(true);
      expect(messages.some((m) => /did not decide within 2000 ms/.test(m)), 'some past the deadline').to.equal(true);
    }
    await cluster.core.setFaults('ok');
    // The first flood grows the heap and the socket pools to their working size; later floods settle
    // around it (RSS moves with when V8 collects, so two floods are measured together).
    expect(rss[3]! - rss[1]!, `RSS growth over the second and third floods (bytes; ${rss.join(' -> ')})`).to.be.below(112 * 1024 * 1024);
    expect(rss[1]! - rss[0]!, 'RSS growth over the first flood (bytes)').to.be.below(160 * 1024 * 1024);

    // Core is back: so is the service.
    expectStatus(await api.getRoom(scope, reader), 200);
  });
});

function countBy(responses: ApiResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of responses) {
    const key = r.status === 503 ? (errorCode(r) ?? 'no code') : String(r.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
