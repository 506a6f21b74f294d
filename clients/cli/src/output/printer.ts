import type { CliIo } from '../cli-io.ts';
import { jsonLine } from './json-line.ts';
import { colourEnabled, palette, type Palette } from './palette.ts';
import { terminalSafeLine } from './terminal-text.ts';

/**
 * Where a command's results go: readable text (coloured on a terminal) or, with `--json`, one API
 * object per line on stdout. Hints and progress go to stderr, so stdout stays the data alone.
 */
export class Printer {
  readonly json: boolean;
  /** Styles for stdout. */
  readonly out: Palette;
  private readonly err: Palette;

  constructor(
    private readonly io: CliIo,
    options: { json: boolean },
  ) {
    this.json = options.json;
    this.out = palette(!options.json && colourEnabled(io.stdout, io.env));
    this.err = palette(colourEnabled(io.stderr, io.env));
  }

  /** One result: `value` as a JSON line, or `readable(palette)` as text. */
  result<T>(value: T, readable: (value: T, p: Palette) => string): void {
    this.io.stdout.write(this.json ? jsonLine(value) : readable(value, this.out));
  }

  /** A hint for the person at the terminal (resume cursors, what to run next), on stderr. */
  hint(text: string): void {
    this.io.stderr.write(`${this.err.dim(terminalSafeLine(text))}\n`);
  }
}
