import { expect } from 'chai';
import { highlightFragments } from './search-highlight.ts';

describe('search highlight fragments', () => {
  it('marks each match case-insensitively, as runs of plain text', () => {
    expect(highlightFragments('Rename parseConfig, then PARSECONFIG again', ['parseconfig'])).to.deep.equal([
      [
        { text: 'Rename ', match: false },
        { text: 'parseConfig', match: true },
        { text: ', then ', match: false },
        { text: 'PARSECONFIG', match: true },
        { text: ' again', match: false },
      ],
    ]);
  });

  it('matches a phrase across any whitespace, and prefers it to a word inside it', () => {
    expect(highlightFragments('an exact\n  phrase here', ['exact phrase', 'exact'])).to.deep.equal([
      [
        { text: 'an ', match: false },
        { text: 'exact\n  phrase', match: true },
        { text: ' here', match: false },
      ],
    ]);
  });

  it('keeps markup as text and takes regular-expression characters literally', () => {
    expect(highlightFragments('<b>x</b> call flushQueue() (a.b)', ['flushqueue()', '<b>'])).to.deep.equal([
      [
        { text: '<b>', match: true },
        { text: 'x</b> call ', match: false },
        { text: 'flushQueue()', match: true },
        { text: ' (a.b)', match: false },
      ],
    ]);
  });

  it('cuts a long body into fragments around matches, at most three, never inside a surrogate pair', () => {
    const filler = '😀'.repeat(100);
    const body = `needle ${filler} needle ${filler} needle ${filler} needle ${filler} needle`;
    const fragments = highlightFragments(body, ['needle'], { context: 12 });
    expect(fragments).to.have.length(3);
    for (const fragment of fragments) {
      expect(fragment.filter((r) => r.match).map((r) => r.text)).to.deep.equal(['needle']);
      for (const run of fragment) expect(run.text).to.equal(Buffer.from(run.text, 'utf8').toString('utf8'));
      expect(fragment.map((r) => r.text).join('')).to.not.match(/[\uD800-\uDBFF]$|^[\uDC00-\uDFFF]/);
    }
  });

  it('gives nothing for a query without words, or when nothing matches', () => {
    expect(highlightFragments('hello', [])).to.deep.equal([]);
    expect(highlightFragments('hello', ['absent'])).to.deep.equal([]);
  });
});
