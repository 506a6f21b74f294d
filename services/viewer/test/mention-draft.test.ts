import { expect } from 'chai';
import { activeMentionQuery, carryMentions, insertMention, mentionBindings, suggestReaders, type RoomReader } from '../src/app/mention-draft.ts';

const BOB: RoomReader = { kind: 'human', id: 'u_bob', role: 'read' };
const CI: RoomReader = { kind: 'bot', id: 'b_ci' };
const READERS: RoomReader[] = [{ kind: 'human', id: 'u_alice', role: 'write' }, BOB, CI, { kind: 'bot', id: 'b_reader' }];

/** The bytes each binding's span covers in the body as sent. */
const covered = (body: string, bindings: { startByte: number; endByte: number }[]) => bindings.map((b) => Buffer.from(body).subarray(b.startByte, b.endByte).toString());

describe('mention draft', () => {
  it('opens on an @ at a word start, with the ID typed so far; not inside an address', () => {
    expect(activeMentionQuery('👋 @u_b', 7)).to.deep.equal({ at: 3, query: 'u_b' });
    expect(activeMentionQuery('@', 1)).to.deep.equal({ at: 0, query: '' });
    expect(activeMentionQuery('(@b_', 4)).to.deep.equal({ at: 1, query: 'b_' });
    expect(activeMentionQuery('mail me@example.org', 19)).to.equal(undefined);
    expect(activeMentionQuery('@u_bob done', 11)).to.equal(undefined);
  });

  it('suggests readers holding the query, those starting with it first', () => {
    expect(suggestReaders(READERS, 'u_b').map((r) => r.id)).to.deep.equal(['u_bob']);
    expect(suggestReaders(READERS, 'B').map((r) => r.id)).to.deep.equal(['b_ci', 'b_reader', 'u_bob']);
    expect(suggestReaders(READERS, '')).to.have.length(4);
  });

  it('inserts the pick and binds it with an exact UTF-8 span after emoji', () => {
    const picked = insertMention('👋 @u_b', 3, 7, BOB, []);
    expect(picked).to.deep.equal({ text: '👋 @u_bob ', caret: 10, mentions: [{ principalKind: 'human', principalId: 'u_bob', index: 3 }] });
    const body = `${picked.text}please review`;
    const bindings = mentionBindings(body, carryMentions(picked.text, body, picked.mentions));
    expect(bindings).to.deep.equal([{ principalKind: 'human', principalId: 'u_bob', startByte: 5, endByte: 11 }]);
    expect(covered(body, bindings)).to.deep.equal(['@u_bob']);
  });

  it('moves mentions with text typed before them and drops one whose text was edited', () => {
    const first = insertMention('@', 0, 1, CI, []);
    const both = insertMention(`${first.text}and @`, 10, 11, BOB, first.mentions);
    expect(both.text).to.equal('@b_ci and @u_bob ');
    const prefixed = `日本 ${both.text}`;
    const moved = carryMentions(both.text, prefixed, both.mentions);
    expect(covered(prefixed, mentionBindings(prefixed, moved))).to.deep.equal(['@b_ci', '@u_bob']);

    const renamed = prefixed.replace('@u_bob', '@u_bobby');
    expect(carryMentions(prefixed, renamed, moved).map((m) => m.principalId)).to.deep.equal(['b_ci']);
    const cut = prefixed.replace('@b_ci', '@b_c');
    expect(carryMentions(prefixed, cut, moved).map((m) => m.principalId)).to.deep.equal(['u_bob']);
    const sentenceEnd = prefixed.replace('@u_bob ', '@u_bob. ');
    expect(carryMentions(prefixed, sentenceEnd, moved).map((m) => m.principalId)).to.deep.equal(['b_ci', 'u_bob']);
    // Text pasted over a mention's place: whatever shows there now, the recorded mention is gone.
    expect(carryMentions(prefixed, '@u_bob', moved)).to.deep.equal([]);
  });
});
