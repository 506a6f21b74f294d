import { Counter, Gauge, Registry } from 'prom-client';
import type { StreamHub } from './domain/stream-hub.ts';
import type { CloseReason } from './domain/stream-session.ts';

/** The gateway's own prom-client registry and the counters the engine bumps. */
export interface GatewayMetrics {
  registry: Registry;
  streamOpened(): void;
  streamClosed(reason: CloseReason): void;
}

/** Creates the registry; open streams and scopes are read from the hub at scrape time. */
export function createGatewayMetrics(hub: () => StreamHub | undefined): GatewayMetrics {
  const registry = new Registry();
  const opened = new Counter({ name: 'chat_gateway_streams_opened_total', help: 'Streams opened.', registers: [registry] });
  const closed = new Counter({ name: 'chat_gateway_streams_closed_total', help: 'Streams closed, by reason.', labelNames: ['reason'], registers: [registry] });
  new Gauge({
    name: 'chat_gateway_streams_open',
    help: 'Streams open in this process.',
    registers: [registry],
    collect() {
      this.set(hub()?.stats().sessions ?? 0);
    },
  });
  new Gauge({
    name: 'chat_gateway_scopes_open',
    help: 'Rooms and inboxes with at least one open stream in this process.',
    registers: [registry],
    collect() {
      this.set(hub()?.stats().scopes ?? 0);
    },
  });
  return {
    registry,
    streamOpened: () => opened.inc(),
    streamClosed: (reason) => closed.inc({ reason }),
  };
}
