import { createHash } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { AppError } from './errors.ts';
import { CURSOR_LENGTH, CursorCodec, type CursorBinding } from './cursor.ts';

const KEY_A = 'a'.repeat(32) + '-cursor-secret-one';
const KEY_B = 'b'.repeat(32) + '-cursor-secret-two';
const REPO = '01J9ZQ3V0C6M4WB7X8Y9Z0ABCD';
const ROOM: CursorBinding = { kind: 'room', roomId: '01J9ZQ3V0C6M4WB7X8Y9Z0ROOM' };
const INBOX: CursorBinding = { kind: 'inbox', repositoryId: REPO, principalKind: 'human', principalId: 'u_alice' };
const FEED: CursorBinding = { kind: 'feed', principalKind: 'human', principalId: 'u_alice' };
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function expectInvalid(run: () => unknown, label = ''): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected CURSOR_INVALID ${label}`).to.be.instanceOf(AppError);
  expect((thrown as AppError).code, label).to.equal('CURSOR_INVALID');
  expect((thrown as AppError).status).to.equal(400);
}

describe('CursorCodec', () => {
  const codec = new CursorCodec({ current: KEY_A });

  it('round-trips positions, including 0 and Number.MAX_SAFE_INTEGER', () => {
    for (const position of [0, 1, 255, 256, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]) {
      for (const scope of [ROOM, INBOX, FEED]) {
        const cursor = codec.encode(scope, position);
        expect(cursor).to.match(/^[A-Za-z0-9_-]+$/).and.have.length(CURSOR_LENGTH);
        expect(codec.decode(scope, cursor)).to.equal(position);
      }
    }
  });

  it('is deterministic and differs per scope and position', () => {
    expect(codec.encode(ROOM, 5)).to.equal(codec.encode(ROOM, 5));
    expect(codec.encode(ROOM, 5)).not.to.equal(codec.encode(ROOM, 6));
    expect(codec.encode(ROOM, 5)).not.to.equal(codec.encode({ kind: 'room', roomId: 'other' }, 5));
  });

  it('refuses to encode positions that are not non-negative safe integers', () => {
    for (const position of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, Infinity]) {
      expect(() => codec.encode(ROOM, position)).to.throw(RangeError);
    }
  });

  it('rejects secrets shorter than 32 characters', () => {
    expect(() => new CursorCodec({ current: 'short' })).to.throw(TypeError);
    expect(() => new CursorCodec({ current: KEY_A, previous: ['short'] })).to.throw(TypeError);
  });

  it('rejects a cursor from another room', () => {
    const cursor = codec.encode(ROOM, 42);
    expectInvalid(() => codec.decode({ kind: 'room', roomId: '01J9ZQ3V0C6M4WB7X8Y9Z0ROOX' }, cursor));
  });

  it('rejects a cursor from another inbox: other principal, repository or principal kind', () => {
    const cursor = codec.encode(INBOX, 42);
    const others: CursorBinding[] = [
      { ...INBOX, principalId: 'u_bob' },
      { ...INBOX, repositoryId: '01J9ZQ3V0C6M4WB7X8Y9Z0ABCE' },
      { ...INBOX, principalKind: 'bot' },
    ];
    for (const scope of others) expectInvalid(() => codec.decode(scope, cursor), JSON.stringify(scope));
  });

  it('rejects room cursors in an inbox and inbox cursors in a room', () => {
    expectInvalid(() => codec.decode(INBOX, codec.encode(ROOM, 1)));
    expectInvalid(() => codec.decode(ROOM, codec.encode(INBOX, 1)));
    // Even when the scope strings could be made to look alike, the kind byte differs.
    const room: CursorBinding = { kind: 'room', roomId: `${REPO}:human:u_alice` };
    expectInvalid(() => codec.decode(INBOX, codec.encode(room, 1)));
  });

  it('rejects a feed cursor of another principal: other id or principal kind', () => {
    const cursor = codec.encode(FEED, 42);
    const others: CursorBinding[] = [
      { ...FEED, principalId: 'u_bob' },
      { ...FEED, principalKind: 'bot' },
    ];
    for (const scope of others) expectInvalid(() => codec.decode(scope, cursor), JSON.stringify(scope));
    expect(codec.decode(FEED, cursor)).to.equal(42);
  });

  it('rejects feed cursors in an inbox or room and inbox or room cursors in a feed', () => {
    const aliceInbox = { kind: 'inbox', repositoryId: REPO, principalKind: 'human', principalId: 'u_alice' } as const;
    expectInvalid(() => codec.decode(aliceInbox, codec.encode(FEED, 1)));
    expectInvalid(() => codec.decode(ROOM, codec.encode(FEED, 1)));
    expectInvalid(() => codec.decode(FEED, codec.encode(aliceInbox, 1)));
    expectInvalid(() => codec.decode(FEED, codec.encode(ROOM, 1)));
    // A room whose id spells the feed's scope string still differs by the kind byte.
    const lookalike: CursorBinding = { kind: 'room', roomId: 'human:u_alice' };
    expectInvalid(() => codec.decode(FEED, codec.encode(lookalike, 1)));
    expectInvalid(() => codec.decode(lookalike, codec.encode(FEED, 1)));
  });

  it('binds a webhook dead-letter cursor to its webhook and its delivery ID, apart from every other kind', () => {
    const letter: CursorBinding = { kind: 'webhookDeadLetter', webhookId: '01J9ZQ3V0C6M4WB7X8Y9Z0HOOK', deliveryId: '01J9ZQ3V0C6M4WB7X8Y9Z0HOOK.01J9ZQ3V0C6M4WB7X8Y9Z0NOTE' };
    const cursor = codec.encode(letter, 1_764_300_000_123);
    expect(codec.decode(letter, cursor)).to.equal(1_764_300_000_123);
    for (const scope of [{ ...letter, webhookId: '01J9ZQ3V0C6M4WB7X8Y9Z0HOOX' }, { ...letter, deliveryId: `${letter.webhookId}.01J9ZQ3V0C6M4WB7X8Y9Z0NOTX` }, ROOM, INBOX, FEED]) {
      expectInvalid(() => codec.decode(scope, cursor), JSON.stringify(scope));
    }
    const lookalike: CursorBinding = { kind: 'room', roomId: `${letter.webhookId}:${letter.deliveryId}` };
    expectInvalid(() => codec.decode(letter, codec.encode(lookalike, 1)));
  });

  it('rejects a feed cursor whose kind byte is rewritten to another kind', () => {
    const bytes = Buffer.from(codec.encode(FEED, 5), 'base64url');
    for (const kindByte of [1, 2]) {
      const edited = Buffer.from(bytes);
      edited[1] = kindByte;
      expectInvalid(() => codec.decode(INBOX, edited.toString('base64url')));
      expectInvalid(() => codec.decode(ROOM, edited.toString('base64url')));
    }
  });

  it('rejects cursors signed with an unknown key (forgery)', () => {
    const forger = new CursorCodec({ current: KEY_B });
    expectInvalid(() => codec.decode(ROOM, forger.encode(ROOM, 7)));
  });

  it('accepts the previous key during rotation and rejects it once removed', () => {
    const old = codec.encode(ROOM, 9);
    const rotated = new CursorCodec({ current: KEY_B, previous: [KEY_A] });
    expect(rotated.decode(ROOM, old)).to.equal(9);
    expect(rotated.encode(ROOM, 9)).not.to.equal(old);
    expectInvalid(() => codec.decode(ROOM, rotated.encode(ROOM, 9)));
    const retired = new CursorCodec({ current: KEY_B });
    expectInvalid(() => retired.decode(ROOM, old));
  });

  it('verifies with every key that shares a key id (one-byte ids collide)', () => {
    const idOf = (secret: string) => createHash('sha256').update(secret).digest()[0];
    let other = 0;
    while (idOf(`${KEY_B}-${other}`) !== idOf(KEY_A)) other += 1;
    const colliding = `${KEY_B}-${other}`;
    const rotated = new CursorCodec({ current: colliding, previous: [KEY_A] });
    expect(rotated.decode(ROOM, codec.encode(ROOM, 3))).to.equal(3);
    expect(rotated.decode(ROOM, rotated.encode(ROOM, 4))).to.equal(4);
    expectInvalid(() => codec.decode(ROOM, rotated.encode(ROOM, 4)));
  });

  it('rejects every single-character substitution of a valid cursor', () => {
    const cursor = codec.encode(ROOM, 123_456);
    let checked = 0;
    for (let i = 0; i < cursor.length; i += 1) {
      for (const ch of `${ALPHABET}+/=.`) {
        if (ch === cursor[i]) continue;
        expectInvalid(() => codec.decode(ROOM, cursor.slice(0, i) + ch + cursor.slice(i + 1)), `at ${i} -> ${ch}`);
        checked += 1;
      }
    }
    expect(checked).to.equal(cursor.length * 67);
  });

  it('rejects every single-byte change of the decoded payload', () => {
    const bytes = Buffer.from(codec.encode(INBOX, 99), 'base64url');
    for (let i = 0; i < bytes.length; i += 1) {
      for (let value = 0; value < 256; value += 1) {
        if (value === bytes[i]) continue;
        const mutated = Buffer.from(bytes);
        mutated[i] = value;
        expectInvalid(() => codec.decode(INBOX, mutated.toString('base64url')), `byte ${i} = ${value}`);
      }
    }
  });

  it('rejects truncated, extended, re-padded and alternate-alphabet cursors', () => {
    const cursor = codec.encode(ROOM, 77);
    for (let length = 0; length < cursor.length; length += 1) expectInvalid(() => codec.decode(ROOM, cursor.slice(0, length)));
    for (const suffix of ['=', '==', 'A', 'AA', 'AAAA', ' ', '\n', '\u0000']) expectInvalid(() => codec.decode(ROOM, cursor + suffix));
    for (const prefix of [' ', '=', 'A']) expectInvalid(() => codec.decode(ROOM, prefix + cursor));
    // The standard alphabet spells the same bytes with + and / where base64url has - and _.
    let position = 0;
    while (!/[-_]/.test(codec.encode(ROOM, position))) position += 1;
    const urlSafe = codec.encode(ROOM, position);
    const standard = Buffer.from(urlSafe, 'base64url').toString('base64');
    expect(standard).not.to.equal(urlSafe);
    expectInvalid(() => codec.decode(ROOM, standard));
    expectInvalid(() => codec.decode(ROOM, `${cursor.slice(0, -1)}=`));
    expectInvalid(() => codec.decode(ROOM, cursor.toUpperCase()));
  });

  it('rejects a validly signed position beyond Number.MAX_SAFE_INTEGER', () => {
    // Built by hand with the codec's own format so only the position bound can reject it.
    const valid = Buffer.from(codec.encode(ROOM, 0), 'base64url');
    valid.writeBigUInt64BE(BigInt(Number.MAX_SAFE_INTEGER) + 1n, 3);
    expectInvalid(() => codec.decode(ROOM, valid.toString('base64url')));
  });

  it('rejects empty, huge and non-string inputs', () => {
    for (const input of ['', 'x'.repeat(1_000_000), undefined, null, 42, {}, [], Buffer.alloc(27), Symbol('c')]) {
      expectInvalid(() => codec.decode(ROOM, input), typeof input);
    }
  });

  it('property: thousands of random mutations are 100% CURSOR_INVALID and nothing else', () => {
    const mutation = fc.oneof(
      fc.record({ op: fc.constant('replace' as const), at: fc.nat(), ch: fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }) }),
      fc.record({ op: fc.constant('insert' as const), at: fc.nat(), ch: fc.string({ minLength: 1, maxLength: 3 }) }),
      fc.record({ op: fc.constant('delete' as const), at: fc.nat(), ch: fc.constant('') }),
      fc.record({ op: fc.constant('flip' as const), at: fc.nat(), ch: fc.integer({ min: 1, max: 255 }).map(String) }),
    );
    const scopes: CursorBinding[] = [ROOM, INBOX, FEED];
    let runs = 0;
    fc.assert(
      fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.nat({ max: 2 }), fc.array(mutation, { minLength: 1, maxLength: 4 }), (position, s, ops) => {
        const scope = scopes[s]!;
        const original = codec.encode(scope, position);
        let text = original;
        for (const m of ops) text = apply(text, m);
        fc.pre(text !== original);
        runs += 1;
        expectInvalid(() => codec.decode(scope, text), JSON.stringify(text));
      }),
      { numRuns: 5_000 },
    );
    expect(runs).to.be.greaterThan(4_500);
  });

  it('property: arbitrary strings never decode and never throw anything but CURSOR_INVALID', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.base64String(), fc.stringMatching(/^[A-Za-z0-9_-]{36}$/)), (text) => {
        expectInvalid(() => codec.decode(ROOM, text));
        expectInvalid(() => codec.decode(FEED, text));
      }),
      { numRuns: 3_000 },
    );
  });
});

function apply(text: string, m: { op: 'replace' | 'insert' | 'delete' | 'flip'; at: number; ch: string }): string {
  const at = text.length === 0 ? 0 : m.at % (text.length + (m.op === 'insert' ? 1 : 0));
  switch (m.op) {
    case 'replace':
      return text.slice(0, at) + m.ch + text.slice(at + 1);
    case 'insert':
      return text.slice(0, at) + m.ch + text.slice(at);
    case 'delete':
      return text.slice(0, at) + text.slice(at + 1);
    case 'flip': {
      const bytes = Buffer.from(text, 'base64url');
      if (bytes.length === 0) return `${text}!`;
      bytes[at % bytes.length] = (bytes[at % bytes.length]! ^ Number(m.ch)) & 0xff;
      return bytes.toString('base64url');
    }
  }
}
