import { expect } from 'chai';
import { mentionBindingAt, utf8ByteLength } from './mention-spans.ts';

const bob = { principalKind: 'human', principalId: 'u_bob' } as const;

/** The bytes a span covers, cut out of the body as the service sees it. */
function spanText(body: string, span: { startByte: number; endByte: number }): string {
  return Buffer.from(body, 'utf8').subarray(span.startByte, span.endByte).toString('utf8');
}

describe('mention spans', () => {
  const samples = [
    '',
    'plain ascii',
    '👋 hi',
    '👨‍👩‍👧‍👦 family',
    '日本語のテキスト',
    'e\u0301 combining, a\u0308\u0323 stacked',
    'ß ü € 𝄞 ✓',
    '\ud800 lone high, lone low \udc00, reversed \udc00\ud800',
  ];

  it('counts UTF-8 bytes exactly as Buffer.byteLength does', () => {
    for (const text of samples) expect(utf8ByteLength(text), JSON.stringify(text)).to.equal(Buffer.byteLength(text, 'utf8'));
  });

  it('places the span on exactly @id after emoji, CJK and combining marks', () => {
    const cases: [string, number][] = [
      ['@u_bob first', 0],
      ['👋 @u_bob please review', 5],
      ['日本語 @u_bob', 10],
      ['e\u0301\u0301 @u_bob', 6],
      ['👨‍👩‍👧‍👦🇸🇪 ß @u_bob', 37],
    ];
    for (const [body, startByte] of cases) {
      const binding = mentionBindingAt(body, body.indexOf('@u_bob'), bob);
      expect(binding, body).to.deep.equal({ ...bob, startByte, endByte: startByte + 6 });
      expect(binding.startByte, body).to.equal(Buffer.byteLength(body.slice(0, body.indexOf('@')), 'utf8'));
      expect(spanText(body, binding), body).to.equal('@u_bob');
    }
  });

  it('binds a bot as well, and each of two mentions of the same person to its own place', () => {
    const body = 'ping @b_ci, 🚀 and @u_bob and again 🚀 @u_bob';
    const second = body.lastIndexOf('@u_bob');
    const bindings = [mentionBindingAt(body, body.indexOf('@b_ci'), { principalKind: 'bot', principalId: 'b_ci' }), mentionBindingAt(body, body.indexOf('@u_bob'), bob), mentionBindingAt(body, second, bob)];
    expect(bindings.map((b) => spanText(body, b))).to.deep.equal(['@b_ci', '@u_bob', '@u_bob']);
    expect(bindings[2]!.startByte).to.equal(Buffer.byteLength(body.slice(0, second)));
  });

  it('refuses an index where the body does not show the mention', () => {
    for (const [body, index] of [['@u_bo', 0], ['hi @u_bob', 0], ['hi @u_bob', -1], ['hi @u_bob', 3.5], ['hi @u_bob', 99]] as const) {
      expect(() => mentionBindingAt(body, index, bob), `${body} ${index}`).to.throw(RangeError);
    }
  });
});
