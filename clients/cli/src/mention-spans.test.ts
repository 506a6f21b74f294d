import { expect } from 'chai';
import { bindMentions, parseMentionOption } from './mention-spans.ts';
import { UsageError } from './usage-error.ts';

describe('--mention', () => {
  it('parses KIND:ID and refuses anything else as a usage error', () => {
    expect(parseMentionOption('bot:b_ci')).to.deep.equal({ principalKind: 'bot', principalId: 'b_ci' });
    expect(parseMentionOption('human:u_bob')).to.deep.equal({ principalKind: 'human', principalId: 'u_bob' });
    for (const bad of ['b_ci', 'team:x', 'bot:', 'bot:a b']) expect(() => parseMentionOption(bad), bad).to.throw(UsageError);
  });

  it('binds each mention to the next free @ID of the body, in UTF-8 bytes', () => {
    const body = 'héllo @b_ci and @u_bob, again @b_ci';
    const bound = bindMentions(body, [parseMentionOption('bot:b_ci'), parseMentionOption('human:u_bob'), parseMentionOption('bot:b_ci')]);
    const bytes = Buffer.from(body, 'utf8');
    expect(bound.map((m) => bytes.subarray(m.startByte, m.endByte).toString('utf8'))).to.deep.equal(['@b_ci', '@u_bob', '@b_ci']);
    expect(bound[0]!.startByte).to.equal(Buffer.byteLength('héllo '));
    expect(bound[2]!.startByte).to.be.greaterThan(bound[1]!.startByte);
  });

  it('refuses a mention whose @ID is not in the body (or is bound already)', () => {
    expect(() => bindMentions('hi @b_ci', [parseMentionOption('bot:b_other')])).to.throw(UsageError, /no free @b_other/);
    expect(() => bindMentions('hi @b_ci', [parseMentionOption('bot:b_ci'), parseMentionOption('bot:b_ci')])).to.throw(UsageError);
  });
});
