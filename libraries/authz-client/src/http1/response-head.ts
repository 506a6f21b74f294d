/** How the body after a head is delimited (RFC 9112 §6.3). */
type BodyFraming = { kind: 'none' } | { kind: 'length'; length: number } | { kind: 'chunked' } | { kind: 'until-close' };

/** The parts of a response head the transport acts on; other fields are checked for form and skipped. */
export interface ResponseHead {
  status: number;
  framing: BodyFraming;
  /** The connection may carry another request after this answer. */
  keepAlive: boolean;
  /** `Keep-Alive: timeout=` in milliseconds. */
  keepAliveMs: number | undefined;
}

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\r\n\0]*)?$/;
/** `name: value`: no space before the colon, no CR, LF or NUL in the value (RFC 9112 §5, §2.2). */
const FIELD_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([^\r\n\0]*?)[ \t]*$/;
const KEEP_ALIVE_TIMEOUT = /(?:^|[,;\s])timeout\s*=\s*"?(\d{1,9})/i;

/** Parses a status line and header fields (the text before the blank line, CRLF-separated). */
export function parseResponseHead(text: string): ResponseHead {
  const lines = text.split('\r\n');
  const statusLine = STATUS_LINE.exec(lines[0]!);
  if (statusLine === null) throw new Error(`core's answer has a malformed status line ${JSON.stringify(lines[0]!.slice(0, 80))}`);
  const http10 = statusLine[1] === '0';
  let contentLength: string | undefined;
  let transferEncoding: string | undefined;
  let connection = '';
  let keepAliveMs: number | undefined;
  for (let i = 1; i < lines.length; i++) {
    const field = FIELD_LINE.exec(lines[i]!);
    if (field === null) throw new Error(`core's answer has a malformed header field ${JSON.stringify(lines[i]!.slice(0, 80))}`);
    const value = field[2]!;
    switch (field[1]!.toLowerCase()) {
      case 'content-length':
        contentLength = contentLength === undefined ? value : `${contentLength},${value}`;
        break;
      case 'transfer-encoding':
        transferEncoding = transferEncoding === undefined ? value : `${transferEncoding},${value}`;
        break;
      case 'connection':
        connection += `,${value.toLowerCase()}`;
        break;
      case 'keep-alive': {
        const timeout = KEEP_ALIVE_TIMEOUT.exec(value);
        if (timeout !== null) keepAliveMs = Number(timeout[1]) * 1000;
        break;
      }
    }
  }
  const tokens = connection === '' ? [] : connection.split(',').map((t) => t.trim());
  let keepAlive = http10 ? tokens.includes('keep-alive') : !tokens.includes('close');
  let framing: BodyFraming;
  if (transferEncoding !== undefined) {
    const codings = transferEncoding.split(',').map((c) => c.trim().toLowerCase());
    framing = codings[codings.length - 1] === 'chunked' ? { kind: 'chunked' } : { kind: 'until-close' };
    // Both headers is how request smuggling starts; the answer is read by Transfer-Encoding, the connection not trusted after.
    if (contentLength !== undefined) keepAlive = false;
  } else if (contentLength !== undefined) {
    framing = { kind: 'length', length: parseContentLength(contentLength) };
  } else {
    framing = { kind: 'until-close' };
  }
  return { status: Number(statusLine[2]), framing, keepAlive, keepAliveMs };
}

/** One decimal length, or a list of identical ones (repeated fields); anything else is malformed. */
function parseContentLength(value: string): number {
  const values = value.includes(',') ? value.split(',').map((v) => v.trim()) : [value];
  const first = values[0]!;
  if (!/^\d{1,15}$/.test(first) || values.some((v) => v !== first)) {
    throw new Error(`core's answer has a malformed Content-Length ${JSON.stringify(value.slice(0, 40))}`);
  }
  return Number(first);
}
