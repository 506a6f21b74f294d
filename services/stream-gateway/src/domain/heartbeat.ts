import { EncodedFrame } from './encoded-frame.ts';
import { jittered } from './jitter.ts';
import { heartbeatFrame } from './sse-frame.ts';

/**
 * Delay of a stream's first heartbeat: anywhere from half the interval to the whole of it, then
 * every interval after. Streams open in bursts (a deploy, a gateway's rotation, a bot fleet's
 * start), and with a fixed first delay every stream of a burst would beat in the same tick for as
 * long as it lives: thousands of writes at once every interval, stalling the deliveries behind them.
 * A random phase spreads them over the interval, and no gap ever exceeds it.
 */
export function firstHeartbeatDelay(heartbeatMs: number, random: () => number = Math.random): number {
  return jittered(heartbeatMs * 0.75, 1 / 3, random);
}

let latest: { at: number; frame: EncodedFrame } | undefined;

/**
 * The heartbeat frame for time `at`, built once and shared by every stream that beats in the same
 * tick (the hub ticks all its streams with one `now`), as a room's event frame is shared.
 */
export function sharedHeartbeatFrame(at: number): EncodedFrame {
  if (latest?.at !== at) latest = { at, frame: new EncodedFrame(Buffer.from(heartbeatFrame(new Date(at)), 'utf8')) };
  return latest.frame;
}
