function decodeEntities(html: string): string {
  return html
    .replace(/&#x([0-9a-f]+);?/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#([0-9]+);?/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&colon;/gi, ':')
    .replace(/&tab;/gi, '\t')
    .replace(/&newline;/gi, '\n');
}

/** Everything that makes HTML run script, checked on the tags the HTML actually has (not on escaped text). */
export function executableParts(html: string): string[] {
  const found: string[] = [];
  const tags = html.match(/<[^>]*>/g) ?? [];
  for (const tag of tags) {
    if (/^<\/?\s*(script|iframe|object|embed|svg|math|style|link|meta|base|form|input|button|textarea|frame|frameset|applet|details|body|html|template)\b/i.test(tag)) found.push(tag);
    if (/\s(on[a-z]+|style|formaction|srcdoc)\s*=/i.test(tag)) found.push(tag);
    for (const m of tag.matchAll(/\b(href|src|action|data|xlink:href)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi)) {
      const value = decodeEntities(m[3] ?? m[4] ?? m[5] ?? '').replace(/[\u0000-\u0020]/g, '').toLowerCase();
      if (/^(javascript|vbscript|data|file):/.test(value)) found.push(tag);
    }
    if (/^<a\s/i.test(tag) && !/rel="[^"]*nofollow[^"]*noopener[^"]*noreferrer[^"]*"|rel="[^"]*noopener[^"]*"/.test(tag)) found.push(`${tag} (no rel)`);
  }
  return found;
}
