import { batch, signal } from '@preact/signals';
import { ChatApiError, type ChatClient, type RoomRef, type SearchResult, type SearchScope } from '@chat/client';

/** Results read per page: about what the panel shows without scrolling far. */
export const SEARCH_PAGE_SIZE = 20;

/** What the person asked for: the query, and the room when only the open room is searched. */
export interface SearchRequest {
  q: string;
  /** Only this room; undefined searches the whole repository. */
  room: RoomRef | undefined;
}

export type SearchPhase = 'loading' | 'ready' | 'failed';

/**
 * The searches of one repository (the service's search extension): the request asked last, its
 * results page by page, most relevant first, whether more follow, and what went wrong. Each page is
 * one request, read when the person asks for more. A newer search replaces the one before it: the
 * answers of the older one that still arrive are dropped.
 */
export class MessageSearch {
  /** The request shown; undefined when no search is open. */
  readonly request = signal<SearchRequest | undefined>(undefined);
  readonly results = signal<readonly SearchResult[]>([]);
  readonly phase = signal<SearchPhase>('loading');
  readonly hasMore = signal(false);
  readonly loadingMore = signal(false);
  readonly failure = signal<Error | undefined>(undefined);
  private cursor: string | undefined;
  /** Bumped by each search and by closing, so answers meant for an earlier one are dropped. */
  private generation = 0;

  constructor(
    private readonly client: ChatClient,
    readonly repositoryId: string,
    private readonly hooks: {
      /** Chat no longer takes this sign-in (401). */
      onAccessLost(error: Error): void;
    },
  ) {}

  /** Searches anew: the first page of `request`'s results. */
  async run(request: SearchRequest): Promise<void> {
    const generation = ++this.generation;
    batch(() => {
      this.request.value = request;
      this.results.value = [];
      this.hasMore.value = false;
      this.failure.value = undefined;
      this.phase.value = 'loading';
    });
    this.cursor = undefined;
    await this.read(generation, request);
  }

  /** Reads the next page of the open search, below the results shown. */
  async more(): Promise<void> {
    const request = this.request.value;
    if (!request || !this.cursor || this.loadingMore.value) return;
    this.loadingMore.value = true;
    try {
      await this.read(this.generation, request);
    } finally {
      this.loadingMore.value = false;
    }
  }

  /** Closes the search; answers still on their way are dropped. */
  clear(): void {
    this.generation++;
    this.request.value = undefined;
  }

  private async read(generation: number, request: SearchRequest): Promise<void> {
    const scope: SearchScope = request.room ? { room: request.room } : { repositoryId: this.repositoryId };
    try {
      const page = await this.client.searchPage(scope, { q: request.q, limit: SEARCH_PAGE_SIZE, cursor: this.cursor });
      if (generation !== this.generation) return;
      this.cursor = page.nextCursor ?? undefined;
      batch(() => {
        this.results.value = [...this.results.value, ...page.items];
        this.hasMore.value = this.cursor !== undefined;
        this.failure.value = undefined;
        this.phase.value = 'ready';
      });
    } catch (error) {
      if (generation !== this.generation) return;
      this.failure.value = error as Error;
      if (this.phase.value === 'loading') this.phase.value = 'failed';
      if (error instanceof ChatApiError && error.status === 401) this.hooks.onAccessLost(error);
    }
  }
}
