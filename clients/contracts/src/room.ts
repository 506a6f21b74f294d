import { z } from 'zod';
import { RoomKindSchema, RoomStateSchema } from './enums.ts';
import { dateTimeString, nonNegativeInt64, ulidString } from './primitives.ts';
import { component, described } from './registry.ts';

/** Room metadata (spec section 2, Room). A room not yet stored is returned virtual: `persisted` false. */
export const RoomResponseSchema = component(
  z.strictObject({
    repositoryId: ulidString(),
    kind: RoomKindSchema,
    state: RoomStateSchema,
    persisted: described(z.boolean(), 'False for an empty virtual room that has not been stored yet.'),
    messageCount: nonNegativeInt64(),
    branchId: described(ulidString().nullable().optional(), 'The branch, for branch rooms.'),
    roomId: z.string().nullable().optional(),
    createdAt: dateTimeString().nullable().optional(),
    lastMessageAt: dateTimeString().nullable().optional(),
    sealedAt: dateTimeString().nullable().optional(),
    version: nonNegativeInt64().nullable().optional(),
  }),
  'RoomResponse',
  'A repository room or a branch room.',
);
export type RoomResponse = z.infer<typeof RoomResponseSchema>;
