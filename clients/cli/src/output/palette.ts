/** Styles of the readable output; each but `match` is the identity when colour is off. */
export interface Palette {
  dim(text: string): string;
  bold(text: string): string;
  accent(text: string): string;
  warn(text: string): string;
  /** What a search matched: bold on a terminal, else in `[brackets]`, so it stays visible without colour. */
  match(text: string): string;
}

const style = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
const plain = (text: string) => text;
const bracketed = (text: string) => `[${text}]`;

/**
 * Colour is on only for a terminal: off when the stream is not a TTY, when `NO_COLOR` is set to
 * anything non-empty (no-color.org) or when `TERM` is `dumb`.
 */
export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

export function palette(enabled: boolean): Palette {
  if (!enabled) return { dim: plain, bold: plain, accent: plain, warn: plain, match: bracketed };
  return { dim: style(2, 22), bold: style(1, 22), accent: style(36, 39), warn: style(33, 39), match: style(1, 22) };
}
