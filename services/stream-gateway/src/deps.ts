import type { CoreClient, TokenVerifier } from '@chat/authz-client';
import type { CursorCodec } from '@chat/contracts';
import type { Logger } from '@chat/observability';
import type { Store } from '@chat/store';
import type { StreamEngine } from './domain/stream-engine.ts';
import type { StreamLeaseRegistry } from '@chat/stream-caps';

/** What the gateway's routes need, built once at start and handed down explicitly. */
export interface GatewayDeps {
  store: Store;
  tokens: TokenVerifier;
  core: CoreClient;
  cursors: CursorCodec;
  leases: StreamLeaseRegistry;
  engine: StreamEngine;
  logger: Logger;
  clock: () => Date;
}
