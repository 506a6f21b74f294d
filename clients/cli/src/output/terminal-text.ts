/**
 * Text from the service (message bodies, IDs, error messages) made safe to write to a terminal.
 *
 * A message body is untrusted: an ESC byte in it could start an escape sequence that recolours,
 * moves the cursor, rewrites earlier lines, sets the window title or (OSC 52) the clipboard, and a
 * carriage return or a bidirectional override can make a line read differently from its bytes. So
 * every C0 control except line feed and tab, DEL, every C1 control, the bidirectional embedding,
 * override and isolate marks, and the line and paragraph separators are written as visible escapes
 * (`\x1B`, `\u202E`), never as themselves.
 */
const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;

function escapeCharacter(character: string): string {
  const code = character.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).toUpperCase().padStart(2, '0')}` : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** `text` with every character that could steer a terminal written as a visible escape; line feeds and tabs stay. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escapeCharacter);
}

/** `terminalSafe`, and line feeds escaped too: for values printed on one line (IDs, codes, cursors). */
export function terminalSafeLine(text: string): string {
  return terminalSafe(text).replace(/\n/g, '\\n').replace(/\t/g, '\\t');
}
