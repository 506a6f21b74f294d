/**
 * Request heads for the stream front's differential fuzz: generated from parts a client (or an
 * attacker) might send, then mutated byte by byte, and cut into the writes they arrive in. Seeded,
 * so a failure names the seed that replays it.
 */

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface HeadCase {
  /** The bytes, in the writes they arrive in. */
  pieces: Buffer[];
}

const ID_CHARS = '0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghijklmnopqrstuvwxyz';
/** Bytes that tend to matter to an HTTP parser. */
const SHARP_BYTES = ['\r', '\n', ' ', '\t', ':', '\0', '\x0b', '\x0c', '\x7f', '\x80', '\xff', '"', '#', '%', '\\', '<', '{', '|', ',', ';', '=', '/', '?', '@'];

export class HeadGenerator {
  private readonly random: () => number;

  constructor(readonly seed: number) {
    this.random = seededRandom(seed);
  }

  /** One case: a generated head, maybe mutated, cut into writes. */
  next(): HeadCase {
    let text = this.head();
    if (this.chance(0.35)) text = this.mutate(text);
    return { pieces: this.split(Buffer.from(text, 'latin1')) };
  }

  private int(n: number): number {
    return Math.floor(this.random() * n);
  }

  private chance(p: number): boolean {
    return this.random() < p;
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  private id(): string {
    let id = '';
    for (let i = 0, n = 1 + this.int(26); i < n; i++) id += ID_CHARS[this.int(ID_CHARS.length)];
    return id;
  }

  private anyByte(): string {
    return String.fromCharCode(this.int(256));
  }

  private printable(length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += String.fromCharCode(0x21 + this.int(94));
    return s;
  }

  private target(route = false): string {
    if (route) return `/v1/repositories/${this.id()}/${this.pick(['room/events', 'inbox/events', `branches/${this.id()}/room/events`])}${this.chance(0.2) ? '?cursor=abc' : ''}`;
    const path = this.pick([
      () => `/v1/repositories/${this.id()}/room/events`,
      () => `/v1/repositories/${this.id()}/room/events/`,
      () => `/v1/repositories/${this.id()}/branches/${this.id()}/room/events`,
      () => `/v1/repositories/${this.id()}/inbox/events`,
      () => `/v1/repositories/${this.id()}/room`,
      () => `/v1/repositories/%41${this.id()}/room/events`,
      () => `http://gw/v1/repositories/${this.id()}/room/events`,
      () => '*',
      () => '/',
      () => `/v1/repositories/${this.id()}/room/events#frag`,
      () => `/${this.printable(this.int(40))}`,
      () => `/v1/repositories/${this.id()}/room/events${this.pick(SHARP_BYTES)}x`,
      () => `/v1/repositories/${this.id()}/room/events?cursor=${'c'.repeat(this.chance(0.05) ? 17_000 : this.int(60))}`,
    ])();
    if (this.chance(0.3)) return `${path}?${this.pick(['cursor=abc', 'cursor=a&cursor=b', 'x=%zz', `q=${this.printable(this.int(20))}`, '', 'a=b c'])}`;
    return path;
  }

  private requestLine(plain: boolean): string {
    if (plain && this.chance(0.8)) return `GET ${this.target(true)} HTTP/1.1`;
    const method = this.chance(0.85) ? 'GET' : this.pick(['get', 'POST', 'HEAD', 'PUT', 'OPTIONS', 'CONNECT', 'GETT', 'G', 'PRI', 'DELETE', 'GET\t', 'MKCOL', `${this.printable(3)}`]);
    const sep = () => (this.chance(0.92) ? ' ' : this.pick(['  ', '\t', '', ' \t']));
    const version = this.chance(0.85)
      ? 'HTTP/1.1'
      : this.pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'HTTP/1.10', 'http/1.1', 'HTTP/1.1 ', 'HTTP/1', 'HTTP/11', 'HTTP/1.1\t', 'HTTPS/1.1', 'HTTP/9.9']);
    return `${method}${sep()}${this.target()}${sep()}${version}`;
  }

  private headerValue(): string {
    const core = this.pick([
      () => 'gw',
      () => `Bearer ${this.printable(this.int(200))}`,
      () => 'text/event-stream',
      () => '*/*',
      () => this.printable(this.int(30)),
      () => `a${this.pick(SHARP_BYTES)}b`,
      () => this.anyByte(),
      () => '',
      () => 'x'.repeat(this.chance(0.1) ? 16_400 : this.int(500)),
      () => '\xe9t\xe9',
    ])();
    const pad = () => (this.chance(0.8) ? '' : this.pick([' ', '\t', '  ', ' \t ']));
    return `${pad()}${core}${pad()}`;
  }

  private headerLine(): string {
    const name = this.pick([
      () => 'Host',
      () => 'host',
      () => 'HOST',
      () => 'Authorization',
      () => 'Accept',
      () => 'Last-Event-ID',
      () => 'Connection',
      () => 'Upgrade',
      () => 'Content-Length',
      () => 'Transfer-Encoding',
      () => 'Expect',
      () => 'User-Agent',
      () => `X-${this.printable(this.int(10)).replace(/[:]/g, '')}`,
      () => `X${this.pick(SHARP_BYTES)}Y`,
      () => '',
      () => 'Host ',
      () => ' Host',
    ])();
    const value = this.pick([
      () => this.headerValue(),
      () => (/content-length/i.test(name) ? this.pick(['0', '5', '-1', '1 2', '00', '+3', '99999999999999999999']) : this.headerValue()),
      () => (/transfer-encoding/i.test(name) ? this.pick(['chunked', 'gzip', 'gzip, chunked', 'chunked, gzip', 'identity']) : this.headerValue()),
      () => (/connection/i.test(name) ? this.pick(['keep-alive', 'close', 'upgrade', 'Upgrade, keep-alive']) : this.headerValue()),
    ])();
    return this.chance(0.97) ? `${name}:${this.chance(0.9) ? ' ' : ''}${value}` : `${name}${value}`;
  }

  private head(): string {
    const plain = this.chance(0.5);
    const lines = [this.requestLine(plain)];
    if (plain) {
      // Close to what a client sends, so that a good share is served.
      lines.push('Host: gw', 'Accept: text/event-stream', `Authorization: Bearer ${this.printable(40)}`);
      if (this.chance(0.3)) lines.push(`Last-Event-ID: ${this.printable(20)}`);
      if (this.chance(0.3)) lines.push(this.headerLine());
    } else {
      for (let i = 0, n = this.int(8); i < n; i++) lines.push(this.headerLine());
      if (this.chance(0.7)) lines.splice(1 + this.int(lines.length), 0, 'Host: gw');
    }
    if (this.chance(0.04)) {
      const many = this.chance(0.5) ? 995 + this.int(10) : 1000 + this.int(400);
      const block = Array.from({ length: many }, (_, i) => `a${i}:`);
      lines.splice(1, 0, ...(this.chance(0.5) ? block : []));
      if (!lines.includes('Host: gw')) lines.push('Host: gw');
      else if (this.chance(0.5)) lines.push(lines.splice(lines.indexOf('Host: gw'), 1)[0]!);
    }
    if (this.chance(0.06)) lines.push(this.pick(['Host: other', 'Host: gw', 'host: gw', 'Content-Length: 0', 'Content-Length: 1', 'Transfer-Encoding: chunked', 'Authorization: Bearer b']));
    if (this.chance(0.05)) lines.splice(1 + this.int(lines.length), 0, `${this.pick([' ', '\t'])}folded ${this.printable(5)}`);
    if (this.chance(0.03)) {
      // A head within a few bytes of Node's 16 KiB header limit, either side of it.
      const length = lines.reduce((sum, line) => sum + line.length + 2, 2) + 'X-Pad: '.length + 2;
      lines.push(`X-Pad: ${'p'.repeat(Math.max(0, 16 * 1024 - length + this.int(101) - 50))}`);
    }
    let eol = '\r\n';
    if (this.chance(0.06)) eol = this.pick(['\n', '\r', '\r\r\n', '\n\r']);
    // Now and then one line ends otherwise than the rest.
    const odd = this.chance(0.1) ? this.int(lines.length) : -1;
    let text = lines.map((line, i) => line + (i === odd ? this.pick(['\n', '\r', '\r\r\n']) : eol)).join('');
    text += this.chance(0.92) ? eol : '';
    if (this.chance(0.05)) text = eol + text;
    // What may follow the head: a body, another request, garbage.
    if (this.chance(0.12)) {
      text += this.pick([
        () => 'GET / HTTP/1.1\r\nHost: gw\r\n\r\n',
        () => 'hello',
        () => '0\r\n\r\n',
        () => '\r\n',
        () => this.anyByte().repeat(1 + this.int(5)),
        () => 'GET /v1/repositories/A/room/events HTTP/1.1\r\nHost: gw\r\n\r\n',
      ])();
    }
    if (this.chance(0.05)) text = text.slice(0, this.int(text.length + 1));
    return text;
  }

  private mutate(text: string): string {
    let s = text;
    for (let i = 0, n = 1 + this.int(3); i < n; i++) {
      const at = this.int(s.length + 1);
      const op = this.int(5);
      const byte = this.chance(0.7) ? this.pick(SHARP_BYTES) : this.anyByte();
      if (op === 0) s = s.slice(0, at) + byte + s.slice(at);
      else if (op === 1) s = s.slice(0, at) + byte + s.slice(at + 1);
      else if (op === 2) s = s.slice(0, at) + s.slice(at + 1);
      else if (op === 3) {
        // Repeat a whole line: duplicate headers, a second request line.
        const start = s.lastIndexOf('\n', at) + 1;
        const end = s.indexOf('\n', at);
        if (end !== -1) s = s.slice(0, end + 1) + s.slice(start, end + 1) + s.slice(end + 1);
      } else s = s.slice(0, at);
    }
    return s;
  }

  /** The bytes as 1–5 writes at random places; now and then one byte per write. */
  private split(bytes: Buffer): Buffer[] {
    if (bytes.length < 80 && this.chance(0.03)) return Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    const cuts = new Set<number>();
    for (let i = 0, n = this.int(5); i < n; i++) cuts.add(1 + this.int(Math.max(1, bytes.length - 1)));
    const points = [0, ...[...cuts].filter((c) => c < bytes.length).sort((a, b) => a - b), bytes.length];
    const pieces: Buffer[] = [];
    for (let i = 0; i + 1 < points.length; i++) if (points[i + 1]! > points[i]!) pieces.push(bytes.subarray(points[i], points[i + 1]));
    return pieces;
  }
}
