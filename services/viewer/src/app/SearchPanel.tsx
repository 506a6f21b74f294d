import type { SearchHighlightRun, SearchResult } from '@chat/client';
import { roomTitle, roomTitleText, type CoreRepository } from './core-rooms.ts';
import { describeSearchError } from './error-text.ts';
import type { MessageSearch } from './message-search.ts';
import { messageHash } from './route.ts';

interface Props {
  search: MessageSearch;
  /** Core's list, for the rooms' names. */
  repositories: readonly CoreRepository[] | undefined;
  onOpen(result: SearchResult): void;
  onClose(): void;
}

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });

/** The first non-empty line of a body: what a result of a filters-only query shows. */
function firstLine(body: string): string {
  return body.split('\n').find((line) => line.trim() !== '')?.trim() ?? '';
}

/**
 * One fragment of a body as text runs, what the query matched in `<mark>`, and `…` where the body
 * goes on. Runs are plain text: rendered as text, never as markup.
 */
function Fragment({ runs, body }: { runs: readonly SearchHighlightRun[]; body: string }) {
  const whole = runs.map((run) => run.text).join('');
  return (
    <span class="search-fragment">
      {body.startsWith(whole) ? '' : '…'}
      {runs.map((run, i) => (run.match ? <mark key={i}>{run.text}</mark> : run.text))}
      {body.endsWith(whole) ? '' : '…'}
    </span>
  );
}

/** The results of the open search, each a way to its message in its room, with more on request. */
export function SearchPanel({ search, repositories, onOpen, onClose }: Props) {
  const request = search.request.value;
  const results = search.results.value;
  const phase = search.phase.value;
  const failure = search.failure.value;
  if (!request) return null;
  return (
    <aside class="search-panel" aria-labelledby="search-title">
      <header class="search-head">
        <h2 id="search-title">
          Results for “{request.q}”{request.room ? ' in this room' : ''}
        </h2>
        <button type="button" onClick={onClose} aria-label="Close the search results">
          Close
        </button>
      </header>
      {phase === 'loading' ? <p class="loading">Searching…</p> : null}
      {phase === 'ready' && results.length === 0 ? <p class="empty">No messages match “{request.q}”.</p> : null}
      <ol class="search-results" aria-busy={phase === 'loading'}>
        {results.map((result) => {
          const { message } = result;
          const room = { repositoryId: search.repositoryId, branchId: result.branchId ?? null };
          return (
            <li key={message.messageId} class="search-result" data-message-id={message.messageId}>
              <a
                href={messageHash(room, message.messageId, result.cursor)}
                onClick={(event) => {
                  event.preventDefault();
                  onOpen(result);
                }}
              >
                <span class="search-result-head">
                  <span class={`sender sender-${message.senderKind}`}>{message.senderKind === 'bot' ? `${message.senderId} (bot)` : message.senderId}</span>
                  <span class="search-room">{roomTitleText(roomTitle(repositories, room))}</span>
                  <time dateTime={message.createdAt}>{when.format(new Date(message.createdAt))}</time>
                </span>
                {result.highlights.length > 0 ? (
                  result.highlights.map((runs, i) => <Fragment key={i} runs={runs} body={message.bodyMarkdown} />)
                ) : (
                  <span class="search-fragment">{firstLine(message.bodyMarkdown)}</span>
                )}
              </a>
            </li>
          );
        })}
      </ol>
      {failure ? (
        <div class="error" role="alert">
          {describeSearchError(failure).text} <small class="error-detail">{describeSearchError(failure).detail}</small>
        </div>
      ) : null}
      {search.hasMore.value ? (
        <button type="button" class="search-more" onClick={() => void search.more()} aria-busy={search.loadingMore.value}>
          {search.loadingMore.value ? 'Loading more results…' : 'More results'}
        </button>
      ) : null}
    </aside>
  );
}
