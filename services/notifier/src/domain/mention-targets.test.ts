import { expect } from 'chai';
import { groupMentionTargets } from './mention-targets.ts';

describe('groupMentionTargets', function () {
  it('gives each target one entry with all of its spans, sorted and without repeats', function () {
    const targets = groupMentionTargets([
      { principalKind: 'human', principalId: 'u_bob', startByte: 20, endByte: 24 },
      { principalKind: 'bot', principalId: 'b_ci', startByte: 10, endByte: 13 },
      { principalKind: 'human', principalId: 'u_bob', startByte: 0, endByte: 4 },
      { principalKind: 'human', principalId: 'u_bob', startByte: 0, endByte: 4 },
    ]);
    expect(targets).to.deep.equal([
      { kind: 'human', id: 'u_bob', spans: [{ startByte: 0, endByte: 4 }, { startByte: 20, endByte: 24 }] },
      { kind: 'bot', id: 'b_ci', spans: [{ startByte: 10, endByte: 13 }] },
    ]);
  });

  it('keeps a human and a bot of the same id apart', function () {
    const targets = groupMentionTargets([
      { principalKind: 'human', principalId: 'x', startByte: 0, endByte: 1 },
      { principalKind: 'bot', principalId: 'x', startByte: 2, endByte: 3 },
    ]);
    expect(targets.map((t) => `${t.kind}:${t.id}`)).to.deep.equal(['human:x', 'bot:x']);
  });
});
