import { createRequire } from 'node:module';

/**
 * What Node's HTTP server makes of a connection's first bytes, decided in-process by the parser its
 * server runs (llhttp, through `_http_common`, set up as `_http_server` sets it: a request parser,
 * strict, `maxHeaderSize`) plus the checks the server applies once a head is parsed (the header-pair
 * cap, the Host requirement of HTTP/1.1, `Expect`, protocol upgrades). `real-server-verdict.ts`
 * checks it against a real server on loopback.
 */
export type NodeVerdict =
  /** The parser refused the bytes: Node answers 400 (or 431) and closes. */
  | { kind: 'error'; code: string }
  /** No head yet: Node waits for more, up to its headers timeout. */
  | { kind: 'waiting' }
  | { kind: 'head'; request: NodeRequest };

export interface NodeRequest {
  method: string;
  url: string;
  versionMajor: number;
  versionMinor: number;
  /** Name/value pairs as Node's request gets them (`rawHeaders`, after the server's pair cap). */
  rawHeaders: string[];
  /** The parser flagged an upgrade (or CONNECT): the server emits `upgrade`, not `request`. */
  upgrade: boolean;
  /** The request ended within the bytes given, and nothing (no body, no other request, no stray byte) came with it or after it. */
  alone: boolean;
  /** What the server does with it: its request listener, or an answer of its own. */
  outcome: 'request' | 'missing-host' | 'expect' | 'upgrade';
}

interface Parser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | (Error & { code: string });
  [key: number]: unknown;
}
interface ParserClass {
  new (): Parser;
  REQUEST: number;
  kOnMessageBegin: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
  kOnExecute: number;
  kLenientNone: number;
}

const common = createRequire(import.meta.url)('_http_common') as { HTTPParser: ParserClass; methods: string[] };
const { HTTPParser, methods } = common;
/** `_http_common`'s MAX_HEADER_PAIRS: the server keeps this many entries of the name/value list. */
const MAX_HEADER_ENTRIES = 2000;

/** Node's verdict on `bytes` as the first bytes of a connection, with `maxHeaderSize` as the server's. */
export function nodeVerdict(bytes: Buffer, maxHeaderSize = 16 * 1024): NodeVerdict {
  const parser = new HTTPParser();
  let flushed: string[] = [];
  let flushedUrl = '';
  let request: NodeRequest | undefined;
  let messages = 0;
  let bodyBytes = 0;
  let complete = false;
  parser[HTTPParser.kOnMessageBegin] = () => {
    messages++;
  };
  parser[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
    flushed = flushed.concat(headers);
    flushedUrl += url;
  };
  parser[HTTPParser.kOnHeadersComplete] = (
    versionMajor: number,
    versionMinor: number,
    headers: string[] | undefined,
    method: number,
    url: string | undefined,
    _statusCode: unknown,
    _statusMessage: unknown,
    upgrade: boolean,
  ) => {
    if (request) return 0;
    const rawHeaders = (headers ?? flushed).slice(0, MAX_HEADER_ENTRIES);
    const name = methods[method] ?? `?${method}`;
    const hasHeader = (wanted: string) => {
      for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === wanted) return true;
      return false;
    };
    let outcome: NodeRequest['outcome'] = 'request';
    if (upgrade || name === 'CONNECT') outcome = 'upgrade';
    else if (versionMajor === 1 && versionMinor === 1 && !hasHeader('host')) outcome = 'missing-host';
    else if (hasHeader('expect')) outcome = 'expect';
    request = { method: name, url: url ?? flushedUrl, versionMajor, versionMinor, rawHeaders, upgrade, alone: false, outcome };
    return 0;
  };
  parser[HTTPParser.kOnBody] = (chunk: Buffer) => {
    bodyBytes += chunk.length;
  };
  parser[HTTPParser.kOnMessageComplete] = () => {
    if (messages === 1) complete = true;
  };
  parser[HTTPParser.kOnExecute] = () => undefined;
  parser.initialize(HTTPParser.REQUEST, {}, maxHeaderSize, HTTPParser.kLenientNone);
  const ret = parser.execute(bytes);
  if (!request) return typeof ret === 'number' ? { kind: 'waiting' } : { kind: 'error', code: ret.code };
  request.alone = complete && typeof ret === 'number' && ret === bytes.length && messages === 1 && bodyBytes === 0;
  return { kind: 'head', request };
}
