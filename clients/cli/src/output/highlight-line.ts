import type { SearchHighlightRun } from '@chat/client';
import type { Palette } from './palette.ts';
import { terminalSafeLine } from './terminal-text.ts';

/** A run's text on one line: line breaks and tabs as spaces, anything else that could steer the terminal escaped. */
function flat(text: string): string {
  return terminalSafeLine(text.replace(/\r?\n|\t/g, ' '));
}

/**
 * One highlight fragment of a search result as a line: what the query matched marked
 * ({@link Palette.match}), and `…` at an end where the body goes on beyond the fragment.
 */
export function highlightLine(runs: readonly SearchHighlightRun[], body: string, p: Palette): string {
  const whole = runs.map((run) => run.text).join('');
  const text = runs.map((run) => (run.match ? p.match(flat(run.text)) : flat(run.text))).join('');
  return `${body.startsWith(whole) ? '' : '…'}${text}${body.endsWith(whole) ? '' : '…'}`;
}
