import type { PaginateOptions } from './client-options.ts';

/** A page of a list operation. */
interface Page<T> {
  items: T[];
  nextCursor?: string | null;
}

/**
 * Walks a list operation page by page, yielding items. The next page is fetched only when the loop
 * asks for more, and the walk ends at the page whose `nextCursor` is null.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined, limit: number) => Promise<Page<T>>,
  options: PaginateOptions,
): AsyncGenerator<T, void, undefined> {
  const limit = options.pageSize ?? 200;
  let cursor = options.after ?? undefined;
  for (;;) {
    const page = await fetchPage(cursor, limit);
    yield* page.items;
    if (!page.nextCursor) return;
    cursor = page.nextCursor;
  }
}
