import { stopSharedStacks } from './stacks.ts';
import { stopTestRedis } from './test-redis.ts';

/** Mocha root hooks: the shared stacks outlive single files and stop once, after the last one. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(30_000);
    await stopSharedStacks();
    await stopTestRedis();
  },
};
