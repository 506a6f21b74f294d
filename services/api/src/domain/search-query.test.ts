import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { ulid } from 'ulid';
import { MAX_QUERY_LENGTH, MAX_QUERY_NEEDLES, parseSearchOrder, parseSearchQuery } from './search-query.ts';
import { decodeSearchCursor, encodeSearchCursor, searchBinding } from './search-cursor.ts';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : 'not an AppError';
  }
  return undefined;
}

const EMPTY = { terms: [], phrases: [], senderIds: [], mentionIds: [], hasCode: false, hasLink: false };

describe('search query language', () => {
  it('reads free words lowercased, code as it is typed', () => {
    expect(parseSearchQuery('Parse_Config  src/auth/token.ts config.max_retries')).to.deep.equal({
      ...EMPTY,
      terms: ['parse_config', 'src/auth/token.ts', 'config.max_retries'],
    });
    expect(parseSearchQuery('parseConfig 3F9A2B7').terms).to.deep.equal(['parseconfig', '3f9a2b7']);
  });

  it('takes any name:value but the six filters as a word (URLs, file:line, C++ names)', () => {
    expect(parseSearchQuery('https://example.com/a?b=c token.ts:42 std::vector').terms).to.deep.equal([
      'https://example.com/a?b=c',
      'token.ts:42',
      'std::vector',
    ]);
  });

  it('reads "exact phrases", whitespace joined; a quoted single word is that word', () => {
    expect(parseSearchQuery('"Exact   phrase" retry "flushQueue()"')).to.deep.equal({ ...EMPTY, terms: ['retry', 'flushqueue()'], phrases: ['exact phrase'] });
  });

  it('lowercases ASCII letters only, as the store keeps message text whatever the database\'s locale', () => {
    expect(parseSearchQuery('École "Straße\u00a0ABC"')).to.deep.equal({ ...EMPTY, terms: ['École', 'straße\u00a0abc'] });
  });

  it('reads every filter', () => {
    const branch = ulid();
    expect(parseSearchQuery(`from:u_alice from:b_ci mentions:u_bob in:${branch} before:2026-02-01 after:2026-01-01T09:30:00+01:00 has:code has:LINK word`)).to.deep.equal({
      terms: ['word'],
      phrases: [],
      senderIds: ['u_alice', 'b_ci'],
      mentionIds: ['u_bob'],
      branchId: branch,
      before: new Date('2026-02-01T00:00:00Z'),
      after: new Date('2026-01-01T08:30:00Z'),
      hasCode: true,
      hasLink: true,
    });
    expect(parseSearchQuery('in:repository').branchId).to.equal(null);
    expect(parseSearchQuery('IN:Repository').branchId).to.equal(null);
  });

  it('refuses what it cannot read with REQUEST_INVALID', () => {
    for (const q of [
      undefined,
      ['a', 'b'],
      '',
      '   ',
      '"unclosed',
      'a "" b',
      'from:',
      'from:u_alice"',
      'mentions:<script>',
      'in:main',
      'in:repository in:repository',
      'before:yesterday',
      'before:2026-02-30',
      'after:2026-01-01T09:00:00',
      'before:2026-01-01 before:2026-01-02',
      'has:pictures',
      'x'.repeat(MAX_QUERY_LENGTH + 1),
      Array.from({ length: MAX_QUERY_NEEDLES + 1 }, (_, i) => `w${i}`).join(' '),
    ]) {
      expect(codeOf(() => parseSearchQuery(q)), JSON.stringify(q)).to.equal('REQUEST_INVALID');
    }
    expect(codeOf(() => parseSearchQuery('x'.repeat(MAX_QUERY_LENGTH)))).to.equal(undefined);
  });

  it('reads order: relevance by default, or newest', () => {
    expect(parseSearchOrder(undefined)).to.equal('relevance');
    expect(parseSearchOrder('newest')).to.equal('newest');
    for (const bad of ['oldest', '', ['newest', 'newest']]) expect(codeOf(() => parseSearchOrder(bad))).to.equal('REQUEST_INVALID');
  });
});

describe('search cursor', () => {
  const binding = searchBinding(['repo', null, { terms: ['a'] }, 'newest']);
  const messageId = ulid();

  it('round-trips a position of either order within its search', () => {
    expect(decodeSearchCursor(encodeSearchCursor({ order: 'newest', createdAtMs: 1_760_000_000_123, messageId }, binding), 'newest', binding)).to.deep.equal({
      order: 'newest',
      createdAtMs: 1_760_000_000_123,
      messageId,
    });
    const score = 1.2345678901234567;
    expect(decodeSearchCursor(encodeSearchCursor({ order: 'relevance', score, messageId }, binding), 'relevance', binding)).to.deep.equal({ order: 'relevance', score, messageId });
  });

  it('refuses a cursor of another search, an edited one and garbage with CURSOR_INVALID', () => {
    const cursor = encodeSearchCursor({ order: 'newest', createdAtMs: 1, messageId }, binding);
    const other = searchBinding(['repo', null, { terms: ['b'] }, 'newest']);
    const edited = Buffer.from(Buffer.from(cursor, 'base64url').toString().replace('newest', 'relevance')).toString('base64url');
    for (const [bad, bound] of [[cursor, other], [edited, binding], ['nonsense', binding], [`${cursor}=`, binding], ['', binding]] as const) {
      expect(codeOf(() => decodeSearchCursor(bad, 'newest', bound)), bad).to.equal('CURSOR_INVALID');
    }
    expect(codeOf(() => decodeSearchCursor(cursor, 'relevance', binding))).to.equal('CURSOR_INVALID');
  });
});
