import type { Backbone } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { OutboxRepository } from '@chat/store';
import { AfterCommitPublisher } from './after-commit-publisher.ts';
import { OutboxRelay } from './outbox-relay.ts';
import { DEFAULT_OUTBOX_SETTINGS, type CommittedMessagePublisher, type OutboxSettings } from './outbox.types.ts';

export { DEFAULT_OUTBOX_SETTINGS, type CommittedEntry, type CommittedMessagePublisher, type OutboxSettings } from './outbox.types.ts';

/** The transactional outbox of message appends, seen from the API. */
export interface Outbox {
  /** Publishes right after commit; what it misses stays in the outbox for the relay. */
  publisher: CommittedMessagePublisher;
  /** Publishes the entries nobody published right after commit (a crash, a backbone outage). */
  relay: {
    start(): void;
    /** Stops sweeping; resolves when a running sweep is done. */
    stop(): Promise<void>;
    /** One sweep now; resolves with how many entries it published. */
    sweep(): Promise<number>;
  };
  /** Deletes the outbox rows of everything published so far; for shutdown, after the server stops. */
  flush(): Promise<void>;
}

export interface OutboxDeps {
  /** Where the entries are: the outbox repository is the only code that touches their table. */
  store: { outbox: OutboxRepository };
  backbone: Backbone;
  logger: Logger;
  /** @defaultValue DEFAULT_OUTBOX_SETTINGS */
  settings?: Partial<OutboxSettings>;
  /** @defaultValue the system clock */
  clock?: () => Date;
}

/**
 * The outbox: every message commits with an outbox entry; the publisher sends it to the backbone
 * right after commit and deletes the entry, and the relay publishes whatever is left. Either way a
 * message's events are the same (see `@chat/wire-format`'s message events), and a repeat is harmless:
 * consumers drop what they already have by seq.
 */
export function createOutbox(deps: OutboxDeps): Outbox {
  const settings = { ...DEFAULT_OUTBOX_SETTINGS, ...deps.settings };
  const publisher = new AfterCommitPublisher(deps.backbone, deps.store.outbox, deps.logger, settings.removalDelayMs);
  const relay = new OutboxRelay(deps.store.outbox, deps.backbone, deps.logger, settings, deps.clock ?? (() => new Date()));
  return {
    publisher,
    relay: { start: () => relay.start(), stop: () => relay.stop(), sweep: () => relay.sweep() },
    flush: () => publisher.flush(),
  };
}
