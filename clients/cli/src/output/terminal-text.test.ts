import { expect } from 'chai';
import { jsonLine } from './json-line.ts';
import { terminalSafe, terminalSafeLine } from './terminal-text.ts';

describe('terminal-safe output', () => {
  it('writes ESC, CSI, OSC, BEL, backspace, carriage return and DEL as visible escapes', () => {
    const hostile = 'a\u001b[2Jb\u009b31mc\u001b]52;c;ZXZpbA==\u0007d\be\rf\u007f';
    const safe = terminalSafe(hostile);
    expect(safe).to.equal('a\\x1B[2Jb\\x9B31mc\\x1B]52;c;ZXZpbA==\\x07d\\x08e\\x0Df\\x7F');
    expect(safe).to.not.match(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/);
  });

  it('makes bidirectional overrides and isolates visible (a line must read as its bytes)', () => {
    expect(terminalSafe('x\u202Eabc\u2066d\u2069')).to.equal('x\\u202Eabc\\u2066d\\u2069');
  });

  it('keeps line feeds, tabs and all printable text, emoji and CJK included', () => {
    const text = 'line 1\n\tline 2 — ünïcødé 日本語 🚀';
    expect(terminalSafe(text)).to.equal(text);
    expect(terminalSafeLine(text)).to.equal('line 1\\n\\tline 2 — ünïcødé 日本語 🚀');
  });

  it('--json lines stay valid JSON with the same value, and carry no raw control or bidi character', () => {
    const value = { body: 'a\u001b[31m\u009b\u202E\u2028z\u0000', n: 1 };
    const line = jsonLine(value);
    expect(line.endsWith('\n')).to.equal(true);
    expect(JSON.parse(line)).to.deep.equal(value);
    expect(line.trimEnd()).to.not.match(/[\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2028]/);
  });
});
