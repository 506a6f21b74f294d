import { connect, type Socket } from 'node:net';
import type { ApiClient, ApiRequest, ApiResponse } from './api-client.ts';

export interface BurstAnswer {
  response: ApiResponse;
  /** From writing the request to the end of its answer. */
  ms: number;
}

/**
 * Sends `count` copies of one request at the same moment and checks every answer against the
 * contract (through `client`). The requests are pipelined over `connections` keep-alive connections
 * (HTTP/1.1: the service takes them all at once and answers each connection's in order), since
 * thousands of connection attempts at once overflow the listen backlog and get reset. An answer's
 * time therefore includes waiting for the answers before it on its connection: an upper bound.
 */
export async function burst(client: ApiClient, req: ApiRequest, count: number, connections = 50): Promise<BurstAnswer[]> {
  const url = new URL(client.baseUrl);
  const sockets = await Promise.all(
    Array.from({ length: Math.min(connections, count) }, () => {
      const socket = connect({ host: url.hostname, port: Number(url.port) });
      return new Promise<Socket>((resolve, reject) => socket.once('connect', () => resolve(socket)).once('error', reject));
    }),
  );
  try {
    const head = [`${req.method} ${req.path} HTTP/1.1`, `host: ${url.host}`];
    for (const [name, value] of Object.entries(req.headers ?? {})) if (typeof value === 'string') head.push(`${name}: ${value}`);
    const one = `${head.join('\r\n')}\r\n\r\n`;
    const perSocket = sockets.map((_, i) => Math.floor(count / sockets.length) + (i < count % sockets.length ? 1 : 0));
    const started = performance.now();
    const answered = sockets.map((socket, i) => readAnswers(socket, perSocket[i]!, started));
    sockets.forEach((socket, i) => socket.write(one.repeat(perSocket[i]!), 'latin1'));
    const answers = (await Promise.all(answered)).flat();
    for (const { response } of answers) {
      const problems = client.problems(req, response);
      if (problems.length > 0) throw new Error(`contract violation: ${problems.join('; ')}`);
    }
    return answers;
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}

/** Reads `expected` HTTP/1.1 answers off one connection, each timed from `started`. */
function readAnswers(socket: Socket, expected: number, started: number): Promise<BurstAnswer[]> {
  return new Promise((resolve, reject) => {
    const answers: BurstAnswer[] = [];
    let buffer: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (;;) {
        const parsed = parseOne(buffer);
        if (!parsed) break;
        buffer = buffer.subarray(parsed.length);
        answers.push({ response: parsed.response, ms: performance.now() - started });
        if (answers.length === expected) resolve(answers);
      }
    });
    socket.once('error', reject);
    socket.once('close', () => {
      if (answers.length < expected) reject(new Error(`connection closed after ${answers.length} of ${expected} answers`));
    });
  });
}

/** The first complete answer in `buffer` and its length in bytes, or undefined while it is incomplete. */
function parseOne(buffer: Buffer): { response: ApiResponse; length: number } | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body: Buffer;
  let length: number;
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    let at = end + 4;
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      if (size === 0) {
        length = lineEnd + 4;
        break;
      }
      parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else {
    const size = Number(headers['content-length'] ?? 0);
    if (buffer.length < end + 4 + size) return undefined;
    body = buffer.subarray(end + 4, end + 4 + size);
    length = end + 4 + size;
  }
  const text = body.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { response: { status, headers, text, body: parsed, requestId: headers['x-request-id'] }, length };
}
