/**
 * One balancer process of the storm scenario (forked by round-robin-balancers.ts): a
 * {@link RoundRobinProxy} in front of the backends named by its first argument (a JSON array of
 * `{ host, port }`), in a process of its own so that the two sockets it holds per stream count
 * against its own open-file cap, not the bench's. It sends its URL over IPC once listening and
 * exits when the bench goes away.
 */
import { RoundRobinProxy } from '../streams/round-robin-proxy.ts';

const backends = JSON.parse(process.argv[2] ?? '[]') as Array<{ host: string; port: number }>;
const proxy = new RoundRobinProxy(backends);
const url = await proxy.start();
process.send!({ url });
process.on('disconnect', () => void proxy.close().finally(() => process.exit(0)));
