import { connect } from 'node:net';
import { RedisStreamsBackbone } from '@chat/backbone';
import type { GatewayHarness } from './gateway-harness.ts';

/**
 * The `name` of every connection Redis has open (`CLIENT LIST`), as Redis itself sees them. A raw
 * RESP exchange on a connection of its own (which has no name, so it never counts itself): the
 * backbone adapter stays the only importer of ioredis.
 */
export function redisClientNames(redisUrl: string): Promise<string[]> {
  const { hostname, port } = new URL(redisUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    let reply = Buffer.alloc(0);
    const fail = (err: Error): void => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(5000, () => fail(new Error('redis did not answer CLIENT LIST within 5 s')));
    socket.on('error', fail);
    socket.on('data', (chunk: Buffer) => {
      reply = Buffer.concat([reply, chunk]);
      if (reply[0] === 0x2d /* '-' */) return fail(new Error(`CLIENT LIST failed: ${reply.toString('utf8').trim()}`));
      // The reply is one bulk string: `$<length>\r\n<payload>\r\n`.
      const headerEnd = reply.indexOf('\r\n');
      if (headerEnd < 0) return;
      const length = Number(reply.subarray(1, headerEnd).toString('ascii'));
      if (reply.length < headerEnd + 2 + length + 2) return;
      socket.end();
      const payload = reply.subarray(headerEnd + 2, headerEnd + 2 + length).toString('utf8');
      resolve(
        payload
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => / name=(\S*)/.exec(line)?.[1] ?? ''),
      );
    });
    socket.write('*2\r\n$6\r\nCLIENT\r\n$4\r\nLIST\r\n');
  });
}

/**
 * Connections Redis has open for this harness's backbone: the backbone names each of them
 * `<keyPrefix>:backbone:<role>:<pid>:<n>` (`main`, and one `sub:<channel>` per live subscription),
 * and the harness's key prefix is fresh, so no other test or process shares the count.
 */
export async function backboneConnections(harness: GatewayHarness, redisUrl: string): Promise<string[]> {
  if (!(harness.backbone instanceof RedisStreamsBackbone)) throw new Error('only a Redis backbone has Redis connections');
  const mine = `${harness.backbone.keys.prefix}:backbone:`;
  return (await redisClientNames(redisUrl)).filter((name) => name.startsWith(mine));
}
