import { eq } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { serviceKeys } from './schema.ts';
import { storeCall } from './store-errors.ts';

export interface ServiceKeyRepository {
  /**
   * The secret stored under `name`, created from `generate()` by whichever instance gets there first;
   * every instance then reads the same value.
   */
  getOrCreate(name: string, generate: () => string): Promise<string>;
}

export function createServiceKeyRepository(db: ChatDb): ServiceKeyRepository {
  return {
    getOrCreate: (name, generate) =>
      storeCall(async () => {
        await db.insert(serviceKeys).values({ name, secret: generate() }).onConflictDoNothing({ target: serviceKeys.name });
        const [row] = await db.select().from(serviceKeys).where(eq(serviceKeys.name, name)).limit(1);
        if (!row) throw new Error(`service key ${name} vanished after insert`);
        return row.secret;
      }),
  };
}
