import { expect } from 'chai';
import { decodeTime } from 'ulid';
import { isCanonicalUlid, newUlid } from './ulid.ts';

describe('newUlid', () => {
  it('makes canonical ULIDs whose time part decodes to the given time', () => {
    for (const time of [0, 1, 1_700_000_000_123, Date.now(), 2 ** 48 - 1]) {
      const id = newUlid(time);
      expect(isCanonicalUlid(id), id).to.equal(true);
      expect(decodeTime(id)).to.equal(time);
    }
  });

  it('refuses times a ULID cannot hold', () => {
    for (const time of [-1, 2 ** 48, 1.5, Number.NaN]) expect(() => newUlid(time)).to.throw(RangeError);
  });

  it('draws the random part fresh for every ID, across pool refills', () => {
    const ids = Array.from({ length: 5000 }, () => newUlid(1_700_000_000_000));
    expect(new Set(ids).size).to.equal(ids.length);
    // Every base32 digit shows up in every random position over 5,000 IDs (fails if bits are stuck).
    for (let position = 10; position < 26; position++) {
      const seen = new Set(ids.map((id) => id[position]));
      expect(seen.size, `position ${position}`).to.equal(32);
    }
  });
});
