/**
 * Highlight fragments of a search result: short stretches of the message body around what the
 * query matched, as runs of plain text each marked matched or not, so a client renders them with
 * its own escaping (no markup to sanitize). Matching is the search's own: case-insensitive
 * substrings, whitespace in a phrase matching any run of whitespace.
 */
export interface HighlightRun {
  text: string;
  match: boolean;
}

export interface HighlightOptions {
  /** Characters of context kept on each side of a match. @defaultValue 60 */
  context?: number;
  /** @defaultValue 3 */
  maxFragments?: number;
}

/**
 * Fragments of `body` around the matches of `needles`, in body order; none when nothing matches
 * (a query of filters only).
 */
export function highlightFragments(body: string, needles: readonly string[], options: HighlightOptions = {}): HighlightRun[][] {
  const context = options.context ?? 60;
  const maxFragments = options.maxFragments ?? 3;
  const sources = needles.filter((n) => n.length > 0).map((n) => n.split(' ').map(escapeRegExp).join('\\s+'));
  if (sources.length === 0) return [];
  // Longer needles first, so a phrase wins over a word inside it.
  sources.sort((a, b) => b.length - a.length);
  const pattern = new RegExp(sources.join('|'), 'giu');
  const matches: Array<[number, number]> = [];
  for (const m of body.matchAll(pattern)) {
    if (m[0].length === 0) continue;
    matches.push([m.index, m.index + m[0].length]);
  }
  if (matches.length === 0) return [];

  // Windows around matches, merged when they touch; then the first few.
  const windows: Array<{ start: number; end: number; matches: Array<[number, number]> }> = [];
  for (const [start, end] of matches) {
    const last = windows.at(-1);
    const from = Math.max(0, start - context);
    if (last && from <= last.end) {
      last.end = Math.min(body.length, Math.max(last.end, end + context));
      last.matches.push([start, end]);
    } else {
      windows.push({ start: from, end: Math.min(body.length, end + context), matches: [[start, end]] });
    }
  }
  return windows.slice(0, maxFragments).map((w) => {
    const runs: HighlightRun[] = [];
    let at = safeBoundary(body, w.start);
    const stop = safeBoundary(body, w.end);
    for (const [start, end] of w.matches) {
      if (start > at) runs.push({ text: body.slice(at, start), match: false });
      runs.push({ text: body.slice(start, end), match: true });
      at = end;
    }
    if (stop > at) runs.push({ text: body.slice(at, stop), match: false });
    return runs;
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** `index`, moved back off the middle of a surrogate pair, so no fragment holds half a character. */
function safeBoundary(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return index;
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}
