import { expect } from 'chai';
import { replyIdempotencyKey } from './reply-key.ts';

const CANONICAL_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

describe('replyIdempotencyKey', () => {
  it('is a canonical ULID, the same for the same notification and reply index', async () => {
    const a = await replyIdempotencyKey('01JGFJJZ00QNYBVPQTAT49MN0F', 0);
    expect(a).to.match(CANONICAL_ULID);
    expect(await replyIdempotencyKey('01JGFJJZ00QNYBVPQTAT49MN0F', 0)).to.equal(a);
  });

  it('differs between notifications and between replies to one notification', async () => {
    const keys = new Set<string>();
    for (let n = 0; n < 200; n++) {
      for (let i = 0; i < 3; i++) {
        const key = await replyIdempotencyKey(`notification-${n}`, i);
        expect(key).to.match(CANONICAL_ULID);
        keys.add(key);
      }
    }
    expect(keys.size).to.equal(600);
  });

  it('uses all 128 bits: the first character spans 0-7 over many notifications', async () => {
    const first = new Set<string>();
    for (let n = 0; n < 400; n++) first.add((await replyIdempotencyKey(`n${n}`, 0))[0]!);
    expect([...first].sort().join('')).to.equal('01234567');
  });
});
