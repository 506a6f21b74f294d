import { ChildService } from './child-service.ts';

export interface DevCoreProcess {
  url: string;
  service: ChildService;
  stop(): Promise<void>;
}

/** Starts dev-core alone (`services/dev-core/src/main.ts`) on a port it picks and prints. */
export async function startDevCoreProcess(): Promise<DevCoreProcess> {
  const service = new ChildService({
    name: 'dev-core',
    script: 'services/dev-core/src/main.ts',
    env: { DEV_CORE_PORT: '0', DEV_CORE_LOG_LEVEL: 'warn' },
  });
  try {
    const match = await service.waitForOutput(/dev-core listening on (http:\/\/\S+)/);
    return { url: match[1]!, service, stop: () => service.stop() };
  } catch (err) {
    await service.stop();
    throw err;
  }
}
