import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

/**
 * The value of `renderPolicy` on every message whose `renderedHtml` came from {@link renderMarkdown}.
 * Consumers trust `renderedHtml` only when the policy is exactly this string, so any change to the
 * allowlist below that widens what can reach a browser needs a new policy version.
 */
export const RENDER_POLICY = 'sanitized_markdown_html_v1';

/**
 * One parser for the whole process: building a markdown-it instance compiles its rule chains, and the
 * instance holds no per-render state.
 *
 * - `html: false`: raw HTML in a message is escaped text, never markup. The sanitizer below is the
 *   second line, not the first.
 * - `linkify: false`: bare URLs stay text. linkify-it's large regular expressions have been the subject
 *   of ReDoS reports, viewers do their own presentation-only linking (spec, client presentation), and
 *   `<https://…>` autolinks and `[text](url)` still make links.
 * - `typographer: false`: the smartquotes/replacements rules add cost and rewrite what people typed
 *   (code-like text in chat suffers), for no safety or product gain.
 * - `maxNesting: 20` (the CommonMark preset's value, not the default preset's 100): inline rules
 *   re-enter themselves up to this depth while looking for a link label's end, so a 16 KB run of `[`
 *   or `![` cost about five times more at 100 (measured by the ReDoS test). It also bounds `>>>>…` and
 *   nested lists; deeper structure renders as text, which chat never needs.
 * - the GFM `table` rule is off: rows are padded with empty cells up to the header's width, so a 16 KB
 *   body (a wide header, then thousands of one-character rows) became ~0.7 MB of HTML and took
 *   hundreds of milliseconds to render and sanitize. Pipe-separated text stays readable as text.
 * - markdown-it's own `validateLink` stays in place: it refuses `javascript:`, `vbscript:`, `file:` and
 *   non-image `data:` destinations after entity decoding, before the sanitizer sees anything.
 */
const markdown = new MarkdownIt('default', {
  html: false,
  linkify: false,
  typographer: false,
  breaks: false,
  xhtmlOut: false,
  maxNesting: 20,
}).disable('table');

/**
 * Images are not allowed in rendered messages: a remote image is a tracking pixel that reports every
 * viewer's address and read time to whoever posted it. Rather than dropping what the author wrote,
 * `![alt](src)` becomes an ordinary link to `src` labelled with the alt text (or the URL), which then
 * goes through the same scheme checks and `rel` rewrite as every other link.
 */
markdown.renderer.rules.image = (tokens, index, options, env, self) => {
  const token = tokens[index];
  if (token === undefined) return '';
  const source = String(token.attrGet('src') ?? '');
  const rawTitle = token.attrGet('title');
  const title = rawTitle === null ? '' : String(rawTitle);
  const altText = self.renderInlineAsText(token.children ?? [], options, env);
  const label = altText.length > 0 ? altText : source;
  const titleAttribute = title === '' ? '' : ` title="${markdown.utils.escapeHtml(title)}"`;
  return `<a href="${markdown.utils.escapeHtml(source)}"${titleAttribute}>${markdown.utils.escapeHtml(label)}</a>`;
};

const LINK_REL = 'nofollow noopener noreferrer';

/**
 * The allowlist. Everything markdown-it can emit for the enabled syntax, and nothing else:
 * - `code` may carry only a `language-<name>` class (fenced code info), for client-side highlighting;
 * - `a` may carry `href`, `title` and the `rel` we set; `target` is dropped, so links open where the
 *   viewer decides;
 * - URL schemes are http, https and mailto; protocol-relative `//host` URLs are refused because they
 *   are absolute links in disguise. Path-relative links (`/x`, `#x`) stay, as sanitize-html allows them.
 */
const SANITIZE_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    'p', 'br', 'hr', 'em', 'strong', 's', 'del', 'code', 'pre', 'blockquote',
    'ul', 'ol', 'li', 'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel'],
    ol: ['start'],
  },
  // A pattern rather than the glob `language-*`: fence info is free text, and a class should be a name.
  allowedClasses: { code: [/^language-[A-Za-z0-9_+#.-]{1,64}$/] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: false,
  allowedStyles: {},
  parseStyleAttributes: false,
  disallowedTagsMode: 'discard',
  enforceHtmlBoundary: false,
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: LINK_REL } }),
    // markdown-it writes `start` as at most nine digits; anything else did not come from it.
    ol: (tagName, attribs) => {
      const { start, ...rest } = attribs;
      return { tagName, attribs: start !== undefined && /^\d{1,9}$/.test(start) ? { ...rest, start } : rest };
    },
  },
};

/**
 * Sanitize HTML with the message allowlist. Exported so tests can prove the step is idempotent on
 * {@link renderMarkdown} output; production code should call {@link renderMarkdown}.
 */
export function sanitizeRenderedHtml(html: string): string {
  return sanitizeHtml(html, SANITIZE_OPTIONS);
}

/**
 * One line of prose that neither Markdown nor HTML gives any meaning to: it starts with a letter (no
 * block syntax does), does not end in a space (a paragraph drops trailing space), and holds only
 * letters, digits, spaces and punctuation that no enabled rule reacts to: no `* _ ~ \` [ ] < > & \ |`,
 * no tab or line break, no combining mark. markdown-it renders such a body as one paragraph of
 * exactly its text, and sanitize-html keeps that as it is (it writes `"` back as it was). Most chat
 * messages are such a line, and parsing and sanitizing them was about a fifth of an append's CPU in
 * the API. The tests check this path against the full one on random bodies of this alphabet.
 */
const PLAIN_PROSE = /^\p{L}[\p{L}\p{N} .,:;?!'"()/@#%$+=^{}-]*$/u;

/**
 * Render message Markdown to sanitized HTML. Pure, deterministic, never throws for any string input.
 *
 * @param bodyMarkdown - the message body as stored (1–16,384 UTF-8 bytes per the API contract; any
 *   string is accepted here).
 * @returns HTML that is safe to insert into a page under {@link RENDER_POLICY}.
 */
export function renderMarkdown(bodyMarkdown: string): string {
  if (PLAIN_PROSE.test(bodyMarkdown) && !bodyMarkdown.endsWith(' ')) return `<p>${bodyMarkdown}</p>\n`;
  return renderThroughParser(bodyMarkdown);
}

/**
 * The full path, markdown-it and then sanitize-html, for every body. Exported so tests can hold the
 * plain-prose path of {@link renderMarkdown} to it; production code should call {@link renderMarkdown}.
 */
export function renderThroughParser(bodyMarkdown: string): string {
  return sanitizeRenderedHtml(markdown.render(bodyMarkdown));
}
