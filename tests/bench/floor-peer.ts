/**
 * The floor's minimal peers (floor-http.ts, floor-redis.ts), each its own process, forked with the
 * role as its argument and its settings over IPC: `http-server` answers every POST with a 201 of
 * the given size; `http-client` keeps `concurrency` keep-alive requests in flight; `xadd` keeps
 * `concurrency` XADDs of one event in flight; `xread` reads them back with a blocking XREAD. Each
 * counts what it did and answers `count` with the total so far.
 */
import http from 'node:http';
import { Redis } from 'ioredis';

export type PeerSettings =
  | { role: 'http-server'; answerBytes: number }
  | { role: 'http-client'; port: number; concurrency: number; requestBytes: number; headers: Record<string, string> }
  | { role: 'xadd'; redisUrl: string; key: string; concurrency: number; eventBytes: number }
  | { role: 'xread'; redisUrl: string; key: string };

export type PeerMessage = { type: 'ready'; port?: number } | { type: 'count'; count: number };

let count = 0;
let running = true;
const send = (message: PeerMessage) => process.send!(message);

function httpServer(s: Extract<PeerSettings, { role: 'http-server' }>): void {
  const answer = Buffer.from(JSON.stringify({ pad: 'x'.repeat(Math.max(0, s.answerBytes - 10)) }));
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': answer.length });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => send({ type: 'ready', port: (server.address() as { port: number }).port }));
}

function httpClient(s: Extract<PeerSettings, { role: 'http-client' }>): void {
  const agent = new http.Agent({ keepAlive: true, maxSockets: s.concurrency });
  const body = Buffer.from(JSON.stringify({ bodyMarkdown: 'x'.repeat(Math.max(0, s.requestBytes - 19)) }));
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: s.port, method: 'POST', path: '/v1/messages', agent, headers: { ...s.headers, 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 201) count++;
          resolve();
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  const lane = async () => {
    while (running) await one();
  };
  for (let i = 0; i < s.concurrency; i++) void lane();
  send({ type: 'ready' });
}

function xadd(s: Extract<PeerSettings, { role: 'xadd' }>): void {
  const redis = new Redis(s.redisUrl);
  const data = JSON.stringify({ pad: 'x'.repeat(Math.max(0, s.eventBytes - 10)) });
  const lane = async (index: number) => {
    for (let i = 0; running; i++) {
      // Trimmed as it goes (MAXLEN ~): the stream stays small, as the backbone's trimmer keeps it.
      await redis.xadd(s.key, 'MAXLEN', '~', 10_000, '*', 's', `room-${index}`, 'q', String(i), 'd', data);
      count++;
    }
  };
  for (let i = 0; i < s.concurrency; i++) void lane(i);
  send({ type: 'ready' });
}

function xread(s: Extract<PeerSettings, { role: 'xread' }>): void {
  const redis = new Redis(s.redisUrl);
  let last = '$';
  const loop = async () => {
    while (running) {
      const reply = (await redis.xread('COUNT', 1000, 'BLOCK', 1000, 'STREAMS', s.key, last)) as Array<[string, Array<[string, string[]]>]> | null;
      const entries = reply?.[0]?.[1] ?? [];
      if (entries.length > 0) last = entries[entries.length - 1]![0];
      count += entries.length;
    }
  };
  void loop();
  send({ type: 'ready' });
}

process.on('message', (message: PeerSettings | { type: 'count' } | { type: 'stop' }) => {
  if ('role' in message) {
    if (message.role === 'http-server') httpServer(message);
    else if (message.role === 'http-client') httpClient(message);
    else if (message.role === 'xadd') xadd(message);
    else xread(message);
  } else if (message.type === 'count') send({ type: 'count', count });
  else {
    running = false;
    process.exit(0);
  }
});
