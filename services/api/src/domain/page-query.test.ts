import { expect } from 'chai';
import { AppError } from '@chat/contracts';
import { DEFAULT_PAGE_SIZE, parseCursorParam, parseLimit } from './page-query.ts';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : 'not an AppError';
  }
  return undefined;
}

describe('page query parsing', () => {
  it('defaults limit to 50 and accepts 1..200', () => {
    expect(parseLimit(undefined)).to.equal(DEFAULT_PAGE_SIZE);
    expect(parseLimit('1')).to.equal(1);
    expect(parseLimit('200')).to.equal(200);
    expect(parseLimit('050')).to.equal(50);
  });

  for (const bad of ['0', '201', '-1', '1.5', 'abc', '', ' 5', '5 ', '+5', '1e2', '99999', '0x10'] as const) {
    it(`refuses limit ${JSON.stringify(bad)} with LIMIT_INVALID`, () => {
      expect(codeOf(() => parseLimit(bad))).to.equal('LIMIT_INVALID');
    });
  }

  it('refuses a repeated limit', () => {
    expect(codeOf(() => parseLimit(['5', '6']))).to.equal('LIMIT_INVALID');
  });

  it('takes one non-empty cursor and refuses repeated or empty ones', () => {
    expect(parseCursorParam(undefined)).to.equal(undefined);
    expect(parseCursorParam('abc')).to.equal('abc');
    expect(codeOf(() => parseCursorParam(''))).to.equal('CURSOR_INVALID');
    expect(codeOf(() => parseCursorParam(['a', 'b']))).to.equal('CURSOR_INVALID');
  });
});
