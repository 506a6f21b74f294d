import { expect } from 'chai';
import { highlightLine } from './highlight-line.ts';
import { palette } from './palette.ts';

describe('search highlight lines', () => {
  const runs = (...parts: Array<string | [string]>) => parts.map((p) => (typeof p === 'string' ? { text: p, match: false } : { text: p[0], match: true }));

  it('marks matches in brackets without colour and in bold with it, and adds … where the body goes on', () => {
    const body = 'before the fragment: fix parse_config now, and after it';
    const fragment = runs('fragment: fix parse_', ['config'], ' now');
    expect(highlightLine(fragment, body, palette(false))).to.equal('…fragment: fix parse_[config] now…');
    expect(highlightLine(fragment, body, palette(true))).to.equal('…fragment: fix parse_\u001b[1mconfig\u001b[22m now…');
    expect(highlightLine(runs(['deploy'], ' is green'), 'deploy is green', palette(false))).to.equal('[deploy] is green');
  });

  it('keeps a fragment on one line and makes what could steer the terminal visible, inside a match too', () => {
    const body = 'one\r\ntwo\tthree \u001b[2J[match\u202E]';
    const fragment = runs('one\r\ntwo\tthree ', ['\u001b[2J[match\u202E]']);
    expect(highlightLine(fragment, body, palette(false))).to.equal('one two three [\\x1B[2J[match\\u202E]]');
  });
});
