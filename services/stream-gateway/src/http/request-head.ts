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
  /** No blank line yet, and still within the size limit. */
  | { kind: 'incomplete' }
  | { kind: 'plain-get'; head: PlainGetHead }
  /** Anything else (another method, HTTP/1.0, a body, a repeated or folded header, a head over the limit): Node's server takes it. */
  | { kind: 'other' };

const REQUEST_LINE = /^GET (\/[!-~]*) HTTP\/1\.1$/;
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Control characters other than HTAB are refused in a field value by Node's parser too.
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
/** Headers that would make the request more than a plain GET: a body, an expectation, a protocol switch. */
const NOT_PLAIN = new Set(['transfer-encoding', 'content-length', 'expect', 'upgrade']);

/**
 * Reads the head at the start of `bytes`. Strict by design: whatever this does not recognize as a
 * plain HTTP/1.1 GET is `other`, and Node's own server then parses the same bytes and answers as it
 * always has, so the two paths cannot disagree on anything but a plain GET. Bytes are read as
 * latin1, as Node reads header values.
 */
export function readRequestHead(bytes: Buffer, maxHeadBytes: number): HeadReading {
  const end = bytes.indexOf('\r\n\r\n', 0, 'latin1');
  if (end === -1) return bytes.length > maxHeadBytes ? { kind: 'other' } : { kind: 'incomplete' };
  if (end + 4 > maxHeadBytes) return { kind: 'other' };
  const lines = bytes.toString('latin1', 0, end).split('\r\n');
  const requestLine = REQUEST_LINE.exec(lines[0]!);
  if (!requestLine) return { kind: 'other' };
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return { kind: 'other' };
    const name = line.slice(0, colon);
    if (!FIELD_NAME.test(name)) return { kind: 'other' };
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    if (BAD_VALUE.test(value)) return { kind: 'other' };
    const key = name.toLowerCase();
    if (key in headers || NOT_PLAIN.has(key)) return { kind: 'other' };
    headers[key] = value;
  }
  if (!('host' in headers)) return { kind: 'other' };
  return { kind: 'plain-get', head: { target: requestLine[1]!, headers, length: end + 4 } };
}
