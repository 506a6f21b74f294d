import { expect } from 'chai';
import { executableParts } from './html-safety.ts';

/** The XSS check of the rendering tests must be able to fail. */
describe('harness: the executable-HTML detector', () => {
  it('finds script tags, event handlers, dangerous URL schemes (entity-encoded too) and links without rel', () => {
    for (const html of [
      '<script>alert(1)</script>',
      '<img src="x" onerror="alert(1)">',
      '<a href="javascript:alert(1)" rel="nofollow noopener noreferrer">x</a>',
      '<a href="&#106;avascript:alert(1)" rel="noopener">x</a>',
      '<a href="jav&#x09;ascript:alert(1)" rel="noopener">x</a>',
      '<img src="data:image/svg+xml;base64,AAAA">',
      '<svg><g/></svg>',
      '<a href="https://example.com">no rel</a>',
      '<p style="x">a</p>',
    ]) {
      expect(executableParts(html), html).to.not.deep.equal([]);
    }
  });

  it('passes sanitized output and escaped text', () => {
    expect(executableParts('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n<p><a href="https://example.com" rel="nofollow noopener noreferrer">x</a> <code>onerror=1</code></p>')).to.deep.equal([]);
  });
});
