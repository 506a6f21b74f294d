/** A request head the gateway serves itself: a plain GET with nothing Node's parser would have to settle. */
export interface PlainGetHead {
  /** The request target as sent (origin form: path and query). */
  target: string;
  /** Header values by lower-case name, each name once. */
  headers: Record<string, string>;
  /** Bytes of the head, the blank line included. */
  length: number;
}

export type HeadReading =
  /** No blank line yet; what came so far can still become a plain GET within the size limit. */
  | { kind: 'incomplete' }
  | { kind: 'plain-get'; head: PlainGetHead }
  /** Anything else (another method, HTTP/1.0, a body, a repeated or folded header, a bare LF, a head over the limit): Node's server takes it. */
  | { kind: 'other' };

const REQUEST_LINE = /^GET (\/[!-~]*) HTTP\/1\.1$/;
const TARGET_CHARS = /^[!-~]*$/;
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_NAME_CHARS = /^[!#$%&'*+.^_`|~0-9A-Za-z-]*$/;
// Control characters other than HTAB are refused in a field value by Node's parser too.
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Headers that would make the request more than a plain GET: a body, an expectation, a protocol switch. */
const NOT_PLAIN = new Set(['transfer-encoding', 'content-length', 'expect', 'upgrade']);
/**
 * Header lines Node's server keeps of a request (`_http_common`'s 2,000 name and value entries);
 * it drops the rest without a word, so a head with more would not reach it as the front read it.
 */
const MAX_HEADER_LINES = 1000;

/**
 * Reads the head at the start of `bytes`. Strict by design: whatever this does not recognize as a
 * plain HTTP/1.1 GET is `other`, and Node's own server then parses the same bytes and answers as it
 * always has, so the two paths cannot disagree on anything but a plain GET. A head still arriving is
 * `other` as soon as it cannot become one (a bare LF, a bad byte, another method), so that Node
 * answers it at once, as it would have, rather than the front waiting for the blank line or its
 * deadline. Bytes are read as latin1, as Node reads header values.
 */
export function readRequestHead(bytes: Buffer, maxHeadBytes: number): HeadReading {
  const end = bytes.indexOf('\r\n\r\n', 0, 'latin1');
  if ((end === -1 ? bytes.length : end + 4) > maxHeadBytes) return { kind: 'other' };
  const lines = bytes.toString('latin1', 0, end === -1 ? bytes.length : end).split('\r\n');
  // Without the blank line the last line may be cut anywhere; it is checked as a beginning.
  const partial = end === -1 ? lines.pop()! : undefined;
  if (lines.length - 1 > MAX_HEADER_LINES) return { kind: 'other' };
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  let target: string | undefined;
  if (lines.length > 0) {
    const requestLine = REQUEST_LINE.exec(lines[0]!);
    if (!requestLine) return { kind: 'other' };
    target = requestLine[1]!;
  }
  for (let i = 1; i < lines.length; i++) {
    const field = readField(lines[i]!, headers);
    if (!field) return { kind: 'other' };
    headers[field.name] = field.value;
  }
  if (partial !== undefined) {
    // A trailing CR can only be the first half of the line's CRLF: the line before it is whole.
    const cut = partial.endsWith('\r');
    const line = cut ? partial.slice(0, -1) : partial;
    let possible: boolean;
    if (target === undefined) possible = cut ? REQUEST_LINE.test(line) : couldStartRequestLine(line);
    else possible = cut ? line === '' || readField(line, headers) !== undefined : couldStartField(line, headers);
    return possible ? { kind: 'incomplete' } : { kind: 'other' };
  }
  if (!('host' in headers)) return { kind: 'other' };
  return { kind: 'plain-get', head: { target: target!, headers, length: end + 4 } };
}

/** One complete header line, or undefined when it would make the head more than a plain GET. */
function readField(line: string, seen: Record<string, string>): { name: string; value: string } | undefined {
  const colon = line.indexOf(':');
  if (colon <= 0) return undefined;
  const name = line.slice(0, colon);
  if (!FIELD_NAME.test(name)) return undefined;
  const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
  if (BAD_VALUE.test(value)) return undefined;
  const key = name.toLowerCase();
  if (key in seen || NOT_PLAIN.has(key)) return undefined;
  return { name: key, value };
}

/** Whether `text` (no line end yet) can still grow into the request line of a plain GET. */
function couldStartRequestLine(text: string): boolean {
  if (text.length <= 5) return 'GET /'.startsWith(text);
  if (!text.startsWith('GET /')) return false;
  const space = text.indexOf(' ', 5);
  if (space === -1) return TARGET_CHARS.test(text.slice(5));
  return TARGET_CHARS.test(text.slice(5, space)) && 'HTTP/1.1'.startsWith(text.slice(space + 1));
}

/** Whether `text` (no line end yet) can still grow into a header line of a plain GET. */
function couldStartField(text: string, seen: Record<string, string>): boolean {
  if (!text.includes(':')) return FIELD_NAME_CHARS.test(text);
  // What is there of the value may lose trailing whitespace; what is wrong in it stays wrong.
  return readField(text, seen) !== undefined;
}
