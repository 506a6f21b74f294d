import { AppError } from '@chat/contracts';
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuthorizeCoalescer, type AuthorizeCall } from './authorize-coalescer.ts';
import type { AuthorizationDecision } from './core-contract.schema.ts';

const REPO = '01J00000000000000000000000';

function callFor(requestId: string): AuthorizeCall {
  return { input: { principal: { kind: 'user', id: 'u_alice' }, repositoryId: REPO, action: 'read' }, requestId } as AuthorizeCall;
}

function allow(requestId: string | undefined): AuthorizationDecision {
  return { decision: 'allow', decisionId: `d-${requestId}`, scopeState: 'active' } as AuthorizationDecision;
}

/** A core stand-in whose calls answer only when the test says so. */
class HeldCore {
  readonly calls: Array<{ ids: string[]; answer(): void; fail(err: Error): void }> = [];

  readonly send = (calls: AuthorizeCall[]): Promise<Array<AuthorizationDecision | Error>> =>
    new Promise((resolve, reject) => {
      this.calls.push({ ids: calls.map((c) => c.requestId!), answer: () => resolve(calls.map((c) => allow(c.requestId))), fail: reject });
    });
}

describe('AuthorizeCoalescer', () => {
  it('sends the first authorization alone and the ones that queued behind it as one call', async () => {
    const core = new HeldCore();
    const coalescer = new AuthorizeCoalescer(core.send);
    const decisions = ['a', 'b', 'c', 'd'].map((id) => coalescer.submit(callFor(id)));
    expect(core.calls.map((c) => c.ids)).to.deep.equal([['a']]);
    core.calls[0]!.answer();
    await decisions[0];
    expect(core.calls.map((c) => c.ids)).to.deep.equal([['a'], ['b', 'c', 'd']]);
    core.calls[1]!.answer();
    expect((await Promise.all(decisions)).map((d) => d.decisionId)).to.deep.equal(['d-a', 'd-b', 'd-c', 'd-d']);
  });

  it('opens another lane when a call stalls, and answers each caller from its own call', async () => {
    const core = new HeldCore();
    const coalescer = new AuthorizeCoalescer(core.send, { stalledAfterMs: 20 });
    const slow = coalescer.submit(callFor('slow'));
    const queued = [coalescer.submit(callFor('q1')), coalescer.submit(callFor('q2'))];
    await sleep(5);
    expect(core.calls, 'before the stall').to.have.length(1);
    await sleep(30);
    expect(core.calls.map((c) => c.ids), 'after the stall').to.deep.equal([['slow'], ['q1', 'q2']]);
    core.calls[1]!.answer();
    expect((await Promise.all(queued)).map((d) => d.decisionId)).to.deep.equal(['d-q1', 'd-q2']);
    core.calls[0]!.answer();
    expect((await slow).decisionId).to.equal('d-slow');
  });

  it('never has more than maxInFlight calls out, however many stall', async () => {
    const core = new HeldCore();
    const coalescer = new AuthorizeCoalescer(core.send, { stalledAfterMs: 5, maxInFlight: 3 });
    const decisions = Array.from({ length: 10 }, (_, i) => coalescer.submit(callFor(`r${i}`)));
    for (let i = 0; i < 4; i++) {
      await sleep(10);
      decisions.push(coalescer.submit(callFor(`late${i}`)));
    }
    await sleep(20);
    expect(core.calls).to.have.length(3);
    // The calls held back go out as lanes free up, and everybody is answered.
    let settled = false;
    const all = Promise.all(decisions).finally(() => (settled = true));
    let answeredUpTo = 0;
    while (!settled) {
      for (; answeredUpTo < core.calls.length; answeredUpTo++) core.calls[answeredUpTo]!.answer();
      await sleep(1);
    }
    expect(await all).to.have.length(14);
    expect(core.calls.flatMap((c) => c.ids)).to.have.length(14);
  });

  it('fails every caller of a call that throws, and only the caller whose answer is an Error', async () => {
    const coalescer = new AuthorizeCoalescer(async (calls) => {
      if (calls.some((c) => c.requestId === 'boom')) throw new Error('core is down');
      return calls.map((c) => (c.requestId === 'bad' ? new Error('bad decision') : allow(c.requestId)));
    });
    const [ok, bad] = await Promise.allSettled([coalescer.submit(callFor('ok')), coalescer.submit(callFor('bad'))]);
    expect(ok.status).to.equal('fulfilled');
    expect((bad as PromiseRejectedResult).reason.message).to.equal('bad decision');
    const down = await Promise.allSettled([coalescer.submit(callFor('boom'))]);
    expect((down[0] as PromiseRejectedResult).reason.message).to.equal('core is down');
  });

  it('answers 503 AUTHORIZATION_UNAVAILABLE beyond maxQueued at once, and past the deadline whether queued or out', async () => {
    const core = new HeldCore();
    const coalescer = new AuthorizeCoalescer(core.send, { maxQueued: 2, deadlineMs: 300, stalledAfterMs: 60_000 });
    const settled = (p: Promise<unknown>) => p.then((v) => v, (err: unknown) => err);
    const out = settled(coalescer.submit(callFor('out')));
    const queued = [settled(coalescer.submit(callFor('q1'))), settled(coalescer.submit(callFor('q2')))];
    const refused = await settled(coalescer.submit(callFor('q3')));
    expect(refused).to.be.instanceOf(AppError);
    expect(refused).to.include({ code: 'AUTHORIZATION_UNAVAILABLE', status: 503 });
    expect((refused as Error).message).to.match(/2 authorizations already wait for the core service/);
    // Core never answers: the call that went out and the ones still waiting all get 503 at the deadline.
    for (const late of [await out, ...(await Promise.all(queued))]) {
      expect(late).to.be.instanceOf(AppError);
      expect(late).to.include({ code: 'AUTHORIZATION_UNAVAILABLE', status: 503 });
      expect((late as Error).message).to.match(/did not decide within 300 ms/);
    }
    expect(core.calls.map((c) => c.ids), 'the expired ones never went out').to.deep.equal([['out']]);
    expect(coalescer.queued).to.equal(0);
  });
});
