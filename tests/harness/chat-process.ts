import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildService } from './child-service.ts';
import { freePort } from './free-port.ts';

export interface ChatProcessOptions {
  /** Extra environment (DATABASE_URL, REDIS_URL, CORE_URL, APPEND_RATE_LIMIT, ...). */
  env?: Record<string, string>;
  /** Name in failure messages. @defaultValue 'chat' */
  name?: string;
  /**
   * The API's and dev-core's ports, e.g. those of the process this one replaces: tokens name their
   * issuer by dev-core's URL, so a restart keeps them valid only on the same dev-core port.
   * @defaultValue two free ports
   */
  ports?: { port: number; devCorePort: number };
  /**
   * The embedded database's folder, owned by the caller and left in place by `stop` (a restart on
   * the same DATA_DIR). @defaultValue a fresh temporary folder, removed by `stop`
   */
  dataDir?: string;
}

export interface ChatProcess {
  /** Base URL of the chat API, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Base URL of the core it uses (its embedded dev-core unless CORE_URL was given). */
  coreUrl: string;
  /** The ports it listens on, to start a successor on. */
  ports: { port: number; devCorePort: number };
  /** Its DATA_DIR. */
  dataDir: string;
  service: ChildService;
  stop(): Promise<void>;
}

/**
 * Starts one all-in-one process (`services/all-in-one/src/main.ts`) on free ports, with its
 * embedded database in a fresh folder (or on the given ports and folder), and waits until
 * `GET /v1/openapi.json` answers 200.
 */
export async function startChatProcess(options: ChatProcessOptions = {}): Promise<ChatProcess> {
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'chat-e2e-')));
  const port = options.ports?.port ?? (await freePort());
  const devCorePort = options.ports?.devCorePort ?? (await freePort());
  const service = new ChildService({
    name: options.name ?? 'chat',
    script: 'services/all-in-one/src/main.ts',
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DEV_CORE_PORT: String(devCorePort),
      DATA_DIR: dataDir,
      PRINT_DEMO_TOKENS: 'false',
      LOG_LEVEL: 'info',
      ...options.env,
    },
  });
  const stop = async () => {
    await service.stop();
    if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const url = `http://127.0.0.1:${port}`;
    await service.waitUntil(async () => (await fetch(`${url}/v1/openapi.json`)).status === 200);
    const core = await service.waitForOutput(/^core:\s+(\S+)$/m, 10_000);
    return { url, coreUrl: core[1]!, ports: { port, devCorePort }, dataDir, service, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
