import { expect } from 'chai';
import { AppError, type MentionBinding } from '@chat/contracts';
import { MAX_MENTIONS_PER_MESSAGE, measureBody, sameContent, validateMentions } from './message-body.ts';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : 'not an AppError';
  }
  return undefined;
}

const mention = (startByte: number, endByte: number, principalId = 'u_bob'): MentionBinding => ({
  principalKind: 'human',
  principalId,
  startByte,
  endByte,
});

describe('message body rules', () => {
  it('counts decoded UTF-8 bytes, with 16,384 the largest body', () => {
    expect(measureBody('é'.repeat(8192)).bytes.length).to.equal(16_384);
    expect(codeOf(() => measureBody('é'.repeat(8192) + 'a'))).to.equal('MESSAGE_INVALID');
    expect(measureBody('😀'.repeat(4096)).bytes.length).to.equal(16_384);
    expect(codeOf(() => measureBody(''))).to.equal('MESSAGE_INVALID');
    expect(measureBody('\u0000').bytes.length).to.equal(1);
  });

  it('refuses lone surrogates, which UTF-8 cannot carry', () => {
    expect(codeOf(() => measureBody('a\uD800b'))).to.equal('MESSAGE_INVALID');
    expect(codeOf(() => measureBody('\uDC00'))).to.equal('MESSAGE_INVALID');
    expect(codeOf(() => measureBody('\uD83D\uDE00'))).to.equal(undefined);
  });

  it('accepts spans inside the body on character boundaries', () => {
    const body = Buffer.from('hi @bob and @élan', 'utf8');
    expect(codeOf(() => validateMentions([mention(3, 7), mention(12, body.length, 'u_elan')], body))).to.equal(undefined);
  });

  it('refuses spans that are empty, reversed, outside the body, mid-character or overlapping', () => {
    const body = Buffer.from('hé @bob', 'utf8'); // 'é' is bytes 1..2
    expect(codeOf(() => validateMentions([mention(3, 3)], body))).to.equal('MENTION_INVALID');
    expect(codeOf(() => validateMentions([mention(5, 3)], body))).to.equal('MENTION_INVALID');
    expect(codeOf(() => validateMentions([mention(4, body.length + 1)], body))).to.equal('MENTION_INVALID');
    expect(codeOf(() => validateMentions([mention(2, 4)], body))).to.equal('MENTION_INVALID');
    expect(codeOf(() => validateMentions([mention(4, 8), mention(6, 8)], body))).to.equal('MENTION_INVALID');
  });

  it('refuses too many mentions and malformed principal IDs', () => {
    const body = Buffer.from('x'.repeat(200));
    const many = Array.from({ length: MAX_MENTIONS_PER_MESSAGE + 1 }, (_, i) => mention(i, i + 1));
    expect(codeOf(() => validateMentions(many, body))).to.equal('MENTION_INVALID');
    expect(codeOf(() => validateMentions([mention(0, 1, '')], body))).to.equal('MENTION_INVALID');
    expect(codeOf(() => validateMentions([mention(0, 1, 'a b')], body))).to.equal('MENTION_INVALID');
    expect(codeOf(() => validateMentions([mention(0, 1, 'x'.repeat(129))], body))).to.equal('MENTION_INVALID');
  });

  it('treats a retry as exact only with the same body and mentions', () => {
    const stored = { bodyMarkdown: 'hi @bob', mentions: [mention(3, 7)] };
    expect(sameContent(stored, { bodyMarkdown: 'hi @bob', mentions: [mention(3, 7)] })).to.equal(true);
    expect(sameContent(stored, { bodyMarkdown: 'hi @bob!', mentions: [mention(3, 7)] })).to.equal(false);
    expect(sameContent(stored, { bodyMarkdown: 'hi @bob', mentions: [] })).to.equal(false);
    expect(sameContent({ bodyMarkdown: 'x', mentions: null }, { bodyMarkdown: 'x', mentions: [] })).to.equal(true);
  });
});
