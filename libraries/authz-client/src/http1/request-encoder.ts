/** Where a request goes, derived once per call from its URL. */
export interface RequestTarget {
  tls: boolean;
  hostname: string;
  port: number;
  /** `Host` header value, and the key of the origin's connection pool. */
  host: string;
  /** Path and query, as sent in the request line. */
  path: string;
}

/** The URL's origin and path; http: and https: only. */
export function requestTarget(url: URL): RequestTarget {
  const protocol = url.protocol;
  if (protocol !== 'http:' && protocol !== 'https:') throw new Error(`core transport speaks http: and https: only, not ${protocol}`);
  const tls = protocol === 'https:';
  const hostname = url.hostname;
  return {
    tls,
    // URL keeps IPv6 literals bracketed; the socket wants the bare address.
    hostname: hostname.startsWith('[') ? hostname.slice(1, -1) : hostname,
    port: url.port === '' ? (tls ? 443 : 80) : Number(url.port),
    host: url.host,
    path: `${url.pathname}${url.search}`,
  };
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, space, tab and obs-text: no CR or LF (header injection), no NUL or other controls. */
const UNSAFE_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** Framing and routing are the transport's: a caller's value could only contradict them. */
const TRANSPORT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/**
 * The whole request as one buffer (head in latin1, body in UTF-8), so it leaves in one write and
 * usually one TCP segment. Throws on a header name or value that could break the framing.
 */
export function encodeRequest(method: string, target: RequestTarget, headers: Record<string, string> | undefined, body: string | undefined): Buffer {
  let head = `${method} ${target.path} HTTP/1.1\r\nHost: ${target.host}\r\n`;
  if (headers !== undefined) {
    for (const name in headers) {
      const value = headers[name]!;
      if (!TOKEN.test(name) || TRANSPORT_HEADERS.has(name.toLowerCase())) throw new Error(`core transport refuses the header name ${JSON.stringify(name)}`);
      if (UNSAFE_VALUE.test(value)) throw new Error(`core transport refuses a value of header ${name} with a control character or a character beyond latin1`);
      head += `${name}: ${value}\r\n`;
    }
  }
  if (body === undefined) {
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') head += 'Content-Length: 0\r\n';
    return Buffer.from(`${head}\r\n`, 'latin1');
  }
  const bodyBytes = Buffer.byteLength(body, 'utf8');
  head += `Content-Length: ${bodyBytes}\r\n\r\n`;
  const request = Buffer.allocUnsafe(head.length + bodyBytes);
  request.write(head, 0, 'latin1');
  request.write(body, head.length, 'utf8');
  return request;
}
