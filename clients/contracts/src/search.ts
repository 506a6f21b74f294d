import { z } from 'zod';
import { MessageResponseSchema } from './message.ts';
import { ulidString } from './primitives.ts';
import { component, described } from './registry.ts';

/**
 * The search extension (searchRepository / searchRepositoryRoom / searchBranchRoom): messages of a
 * repository's rooms that match a query, most relevant or newest first, each with its room, its
 * durable cursor and highlighted fragments of its body.
 */
export const SearchHighlightRunSchema = component(
  z.strictObject({
    text: z.string(),
    match: described(z.boolean(), 'True when `text` is what the query matched.'),
  }),
  'SearchHighlightRun',
  'A run of plain text of a message body (no markup: render it with your own escaping), marked when the query matched it.',
);

export const SearchResultSchema = component(
  z.strictObject({
    message: MessageResponseSchema,
    roomId: z.string(),
    branchId: described(ulidString().nullable().optional(), 'The branch of the message\'s room; null for the repository room.'),
    cursor: described(
      z.string(),
      'The durable cursor of the message in its room (the same one the list, the stream and the history read give): pass it as `at` to the room\'s history read to open the room at the message.',
    ),
    highlights: described(
      z.array(z.array(SearchHighlightRunSchema)),
      'Up to 3 fragments of the body around what matched, in body order, each a list of runs; empty when the query has no words or phrases (filters only).',
    ),
  }),
  'SearchResult',
  'One message that matches a search (extension).',
);
export type SearchResult = z.infer<typeof SearchResultSchema>;

export const SearchPageResponseSchema = component(
  z.strictObject({
    items: z.array(SearchResultSchema),
    nextCursor: described(
      z.string().nullable().optional(),
      'Pass as `cursor`, with the same `q` and `order`, for the next page; null when no more messages matched.',
    ),
  }),
  'SearchPageResponse',
  'A page of search results, in the order asked for (extension).',
);
export type SearchPageResponse = z.infer<typeof SearchPageResponseSchema>;
