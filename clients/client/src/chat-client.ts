import { inboxPath, PRINCIPAL_INBOX_PATH, roomPath, searchPath, webhookPath, WEBHOOKS_PATH } from './api-paths.ts';
import { ChatApiError } from './chat-errors.ts';
import type {
  AppendOptions,
  BackwardPaginateOptions,
  ChatClientOptions,
  HistoryPageOptions,
  PageOptions,
  PaginateOptions,
  RequestOptions,
  RoomRef,
  SearchOptions,
  SearchPageOptions,
  SearchScope,
} from './client-options.ts';
import type {
  AcknowledgeInboxRequest,
  AcknowledgeInboxResponse,
  AppendMessageRequest,
  CreateWebhookRequest,
  CreateWebhookResponse,
  InboxPageResponse,
  MessageHistoryPageResponse,
  MessagePageResponse,
  MessageResponse,
  NotificationResponse,
  RedeliverWebhookRequest,
  RedeliverWebhookResponse,
  RoomResponse,
  SearchPageResponse,
  Webhook,
  WebhookDeadLetter,
  WebhookDeadLetterPageResponse,
  WebhookListResponse,
} from './contract-types.ts';
import { bareToken } from './credentials.ts';
import { ChatEventStream } from './event-stream.ts';
import { HttpTransport } from './http-transport.ts';
import { paginate } from './paginate.ts';
import type { FeedNotificationEvent, InboxNotificationEvent, InboxStreamTarget, PrincipalInboxStreamTarget, RoomMessageEvent, RoomStreamTarget, StreamOptions } from './stream-types.ts';
import { ULID_PATTERN, newUlid } from './ulid.ts';

/** Result of an append. */
export interface AppendResult {
  /** The stored message (the original one when the send was a replay). */
  message: MessageResponse;
  /** True on 201 (this call stored it), false on 200 (an earlier attempt with the same key did). */
  created: boolean;
  /** The Idempotency-Key used; send again with it to repeat the same logical send. */
  idempotencyKey: string;
}

/**
 * One client for the whole chat API (the contract's 11 operations, and the history, principal-feed,
 * search and webhook extensions). REST calls retry network failures, 429 and 503 with bounded backoff; appends keep one Idempotency-Key per logical send, so
 * a retried send never stores a second message. Streams are resumable consumers ({@link ChatEventStream}).
 *
 * @example
 * const client = new ChatClient({ baseUrl: 'http://127.0.0.1:8080', token: () => readFile('chat.token', 'utf8') });
 * await client.appendMessage({ repositoryId }, { bodyMarkdown: 'hello' });
 * for await (const event of client.streamRoom({ repositoryId })) console.log(event.data.bodyMarkdown);
 */
export class ChatClient {
  /** @internal */
  readonly transport: HttpTransport;

  constructor(options: ChatClientOptions) {
    this.transport = new HttpTransport(options);
  }

  /** getRepositoryRoom: the repository room's metadata (virtual rooms have `persisted` = false). */
  async getRepositoryRoom(repositoryId: string, options: RequestOptions = {}): Promise<RoomResponse> {
    return this.getRoom({ repositoryId }, options);
  }

  /** getBranchRoom: a branch room's metadata. */
  async getBranchRoom(repositoryId: string, branchId: string, options: RequestOptions = {}): Promise<RoomResponse> {
    return this.getRoom({ repositoryId, branchId }, options);
  }

  /** The metadata of a repository or branch room. */
  async getRoom(room: RoomRef, options: RequestOptions = {}): Promise<RoomResponse> {
    return (await this.transport.call<RoomResponse>({ method: 'GET', path: roomPath(room), ...options })).body;
  }

  /** listRepositoryMessages: one page of the repository room, oldest first. */
  async listRepositoryMessages(repositoryId: string, options: PageOptions = {}): Promise<MessagePageResponse> {
    return this.listMessages({ repositoryId }, options);
  }

  /** listBranchMessages: one page of a branch room, oldest first. */
  async listBranchMessages(repositoryId: string, branchId: string, options: PageOptions = {}): Promise<MessagePageResponse> {
    return this.listMessages({ repositoryId, branchId }, options);
  }

  /** One page of a repository or branch room. */
  async listMessages(room: RoomRef, options: PageOptions = {}): Promise<MessagePageResponse> {
    const { cursor, limit, ...rest } = options;
    const path = `${roomPath(room)}/messages`;
    return (await this.transport.call<MessagePageResponse>({ method: 'GET', path, query: { cursor, limit }, ...rest })).body;
  }

  /** Every message of a room from `after` on, oldest first, fetching pages as the loop asks. */
  roomMessages(target: RoomRef & PaginateOptions): AsyncIterable<MessageResponse> {
    const { repositoryId, branchId, ...options } = target;
    return paginate((cursor, limit) => this.listMessages({ repositoryId, branchId }, { ...options, cursor, limit }), options);
  }

  /**
   * listRepositoryMessageHistory / listBranchMessageHistory (the service's history extension): the
   * newest `limit` messages of a room, or those just before, just after or starting at a message
   * cursor, oldest first within the page, each with its cursor in `cursors`.
   */
  async listMessageHistory(room: RoomRef, options: HistoryPageOptions = {}): Promise<MessageHistoryPageResponse> {
    const { before, after, at, limit, ...rest } = options;
    const path = `${roomPath(room)}/history`;
    return (await this.transport.call<MessageHistoryPageResponse>({ method: 'GET', path, query: { before, after, at, limit }, ...rest })).body;
  }

  /**
   * Every message of a room from the newest (or from just before `before`) back to the first,
   * newest first, fetching one page of history as the loop asks for more. Each page costs the
   * same whatever the room's size, so breaking out after the first few messages is cheap.
   */
  async *roomMessagesBackward(target: RoomRef & BackwardPaginateOptions): AsyncGenerator<MessageResponse, void, undefined> {
    const { repositoryId, branchId, before, pageSize = 100, ...options } = target;
    let cursor = before ?? undefined;
    for (;;) {
      const page = await this.listMessageHistory({ repositoryId, branchId }, { ...options, before: cursor, limit: pageSize });
      for (let i = page.items.length - 1; i >= 0; i--) yield page.items[i]!;
      if (!page.olderCursor) return;
      cursor = page.olderCursor;
    }
  }

  /**
   * searchRepository / searchRepositoryRoom / searchBranchRoom (the search extension) by `scope`:
   * one page of the messages that match `q`, most relevant or newest first, each with its room, its
   * durable cursor (pass it as `at` to {@link ChatClient.listMessageHistory} to open the room at the
   * message) and highlight fragments of plain text. A query the service cannot read is a
   * {@link ChatApiError} `REQUEST_INVALID`; a spent search budget (429) is retried like any call.
   */
  async searchPage(scope: SearchScope, search: SearchPageOptions, options: RequestOptions = {}): Promise<SearchPageResponse> {
    const { q, order, limit, cursor } = search;
    return (await this.transport.call<SearchPageResponse>({ method: 'GET', path: searchPath(scope), query: { q, order, limit, cursor }, ...options })).body;
  }

  /**
   * Every page of a search, in the order asked for, fetching the next page (by the previous one's
   * `nextCursor`) only when the loop asks for more; the walk ends after the page whose `nextCursor`
   * is null. Each page costs one unit of the caller's search budget, so stop when you have enough.
   *
   * @example
   * for await (const page of client.search({ repositoryId }, { q: 'parse_config', order: 'newest' })) {
   *   for (const result of page.items) console.log(result.cursor, result.message.bodyMarkdown);
   * }
   */
  async *search(scope: SearchScope, search: SearchOptions, options: RequestOptions = {}): AsyncGenerator<SearchPageResponse, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.searchPage(scope, { ...search, cursor }, options);
      yield page;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  /**
   * appendRepositoryMessage / appendBranchMessage by `room.branchId`. The Idempotency-Key is made
   * once (or taken from `options`) and sent on every retry; `IDEMPOTENCY_KEY_REUSED` and every other
   * 4xx but 429 surface as {@link ChatApiError} without a retry.
   */
  async appendMessage(room: RoomRef, body: AppendMessageRequest, options: AppendOptions = {}): Promise<AppendResult> {
    const { idempotencyKey = newUlid(), coreResourceToken, ...rest } = options;
    if (!ULID_PATTERN.test(idempotencyKey)) throw new TypeError('appendMessage: idempotencyKey must be a canonical ULID');
    const headers: Record<string, string> = { 'Idempotency-Key': idempotencyKey };
    if (coreResourceToken !== undefined) headers['X-Service-Core-Authorization'] = `Bearer ${bareToken(coreResourceToken, 'coreResourceToken')}`;
    const path = `${roomPath(room)}/messages`;
    const result = await this.transport.call<MessageResponse>({ method: 'POST', path, headers, body, ...rest });
    return { message: result.body, created: result.status === 201, idempotencyKey };
  }

  /** appendRepositoryMessage: see {@link ChatClient.appendMessage}. */
  async appendRepositoryMessage(repositoryId: string, body: AppendMessageRequest, options: AppendOptions = {}): Promise<AppendResult> {
    return this.appendMessage({ repositoryId }, body, options);
  }

  /** appendBranchMessage: see {@link ChatClient.appendMessage}. */
  async appendBranchMessage(repositoryId: string, branchId: string, body: AppendMessageRequest, options: AppendOptions = {}): Promise<AppendResult> {
    return this.appendMessage({ repositoryId, branchId }, body, options);
  }

  /** listRepositoryInbox: one page of the caller's notifications in a repository, with `acknowledgedCursor`. */
  async listRepositoryInbox(repositoryId: string, options: PageOptions = {}): Promise<InboxPageResponse> {
    const { cursor, limit, ...rest } = options;
    return (await this.transport.call<InboxPageResponse>({ method: 'GET', path: inboxPath(repositoryId), query: { cursor, limit }, ...rest })).body;
  }

  /** Every notification of the caller's inbox in a repository from `after` on, oldest first. */
  inboxNotifications(target: { repositoryId: string } & PaginateOptions): AsyncIterable<NotificationResponse> {
    const { repositoryId, ...options } = target;
    return paginate((cursor, limit) => this.listRepositoryInbox(repositoryId, { ...options, cursor, limit }), options);
  }

  /**
   * acknowledgeRepositoryInbox: moves the checkpoint to `throughCursor`. With `expectedCursor` it is a
   * compare-and-set (409 `INBOX_CHECKPOINT_STALE` when another consumer moved it). Retried like any
   * call; a retry of an applied request answers `replayed: true`, also when the first answer of a
   * compare-and-set was lost (the retry then checks that the checkpoint stands at `throughCursor`).
   */
  async acknowledgeRepositoryInbox(repositoryId: string, body: AcknowledgeInboxRequest, options: RequestOptions = {}): Promise<AcknowledgeInboxResponse> {
    return this.acknowledge(`${inboxPath(repositoryId)}/acknowledgements`, body, options, (signal) =>
      this.listRepositoryInbox(repositoryId, { limit: 1, ...(signal ? { signal } : {}) }),
    );
  }

  /**
   * listPrincipalInbox (the principal-feed extension): one page of the caller's notifications across
   * every repository it may read now, in the order they were made. `nextCursor` and
   * `acknowledgedCursor` are feed cursors; each item's own `cursor` is its repository inbox's.
   */
  async listPrincipalInbox(options: PageOptions = {}): Promise<InboxPageResponse> {
    const { cursor, limit, ...rest } = options;
    return (await this.transport.call<InboxPageResponse>({ method: 'GET', path: PRINCIPAL_INBOX_PATH, query: { cursor, limit }, ...rest })).body;
  }

  /** Every notification of the caller's feed from `after` (a feed cursor) on, oldest first. */
  principalInboxNotifications(options: PaginateOptions = {}): AsyncIterable<NotificationResponse> {
    return paginate((cursor, limit) => this.listPrincipalInbox({ ...options, cursor, limit }), options);
  }

  /**
   * acknowledgePrincipalInbox (the principal-feed extension): moves the feed's checkpoint to
   * `throughCursor` (a feed cursor), and each repository inbox's checkpoint through its notifications
   * up to there. Compare-and-set and retries as {@link ChatClient.acknowledgeRepositoryInbox}.
   */
  async acknowledgePrincipalInbox(body: AcknowledgeInboxRequest, options: RequestOptions = {}): Promise<AcknowledgeInboxResponse> {
    return this.acknowledge(`${PRINCIPAL_INBOX_PATH}/acknowledgements`, body, options, (signal) =>
      this.listPrincipalInbox({ limit: 1, ...(signal ? { signal } : {}) }),
    );
  }

  /**
   * streamPrincipalInbox (the principal-feed extension): a resumable consumer of the caller's
   * `notification` events across every repository it may read, in one connection. Each event's `id`
   * is a feed cursor; without `lastEventId` the stream starts after the feed's acknowledged checkpoint.
   * With `includeMessage`, each event's `data.message` is the notified message.
   */
  streamPrincipalInbox(target: PrincipalInboxStreamTarget = {}, options: StreamOptions = {}): ChatEventStream<FeedNotificationEvent> {
    const path = `${PRINCIPAL_INBOX_PATH}/events${target.includeMessage ? '?include=message' : ''}`;
    return new ChatEventStream<FeedNotificationEvent>(this.transport, { path, durableEvent: 'notification', lastEventId: target.lastEventId }, options);
  }

  /**
   * createWebhook (the webhooks extension): registers a webhook that receives the caller's
   * notifications by signed POST from now on. Resolves with it and its signing `secret` (the one given,
   * or one the service made), which no later answer shows. A URL the service will not send to is a
   * {@link ChatApiError} `REQUEST_INVALID` saying why; one webhook too many is `RESOURCE_CONFLICT`.
   * Retried like any call, so a registration whose answer was lost may be made twice: list and delete.
   */
  async createWebhook(body: CreateWebhookRequest, options: RequestOptions = {}): Promise<CreateWebhookResponse> {
    return (await this.transport.call<CreateWebhookResponse>({ method: 'POST', path: WEBHOOKS_PATH, body, ...options })).body;
  }

  /** listWebhooks (the webhooks extension): the caller's webhooks, oldest first, without their secrets. */
  async listWebhooks(options: RequestOptions = {}): Promise<Webhook[]> {
    return (await this.transport.call<WebhookListResponse>({ method: 'GET', path: WEBHOOKS_PATH, ...options })).body.items;
  }

  /**
   * deleteWebhook (the webhooks extension): removes a webhook of the caller's, its pending deliveries
   * and its dead letters. A webhook that is not the caller's (or no longer exists) is `RESOURCE_NOT_FOUND`.
   */
  async deleteWebhook(webhookId: string, options: RequestOptions = {}): Promise<void> {
    await this.transport.call<undefined>({ method: 'DELETE', path: webhookPath(webhookId), ...options });
  }

  /**
   * listWebhookDeadLetters (the webhooks extension): one page of the webhook's deliveries that failed
   * every attempt, in the order they died, each with its notification.
   */
  async listWebhookDeadLetters(webhookId: string, options: PageOptions = {}): Promise<WebhookDeadLetterPageResponse> {
    const { cursor, limit, ...rest } = options;
    const path = `${webhookPath(webhookId)}/dead-letters`;
    return (await this.transport.call<WebhookDeadLetterPageResponse>({ method: 'GET', path, query: { cursor, limit }, ...rest })).body;
  }

  /** Every dead letter of a webhook from `after` (a page's `nextCursor`) on, fetching pages as the loop asks. */
  webhookDeadLetters(webhookId: string, options: PaginateOptions = {}): AsyncIterable<WebhookDeadLetter> {
    return paginate((cursor, limit) => this.listWebhookDeadLetters(webhookId, { ...options, cursor, limit }), options);
  }

  /**
   * redeliverWebhookDeliveries (the webhooks extension): queues dead letters for delivery again under
   * their delivery IDs, those named in `deliveryIds` (1 to 100) or, without it, every one. Resolves
   * with the IDs queued; one that is not a dead letter of the webhook in state `dead` is left out.
   */
  async redeliverWebhookDeliveries(webhookId: string, body: RedeliverWebhookRequest = {}, options: RequestOptions = {}): Promise<RedeliverWebhookResponse> {
    const path = `${webhookPath(webhookId)}/redeliveries`;
    return (await this.transport.call<RedeliverWebhookResponse>({ method: 'POST', path, body, ...options })).body;
  }

  /**
   * An acknowledgement, retried like any call. A retry of a compare-and-set whose first answer was
   * lost finds its own write: the checkpoint is no longer `expectedCursor`. When it stands exactly at
   * `throughCursor`, the request is applied, and the answer says `replayed`.
   */
  private async acknowledge(
    path: string,
    body: AcknowledgeInboxRequest,
    options: RequestOptions,
    readCheckpoint: (signal: AbortSignal | undefined) => Promise<{ acknowledgedCursor?: string | null }>,
  ): Promise<AcknowledgeInboxResponse> {
    try {
      return (await this.transport.call<AcknowledgeInboxResponse>({ method: 'POST', path, body, ...options })).body;
    } catch (error) {
      const retriedStale = error instanceof ChatApiError && error.code === 'INBOX_CHECKPOINT_STALE' && error.attempts > 1 && body.expectedCursor !== undefined;
      if (!retriedStale) throw error;
      const { acknowledgedCursor } = await readCheckpoint(options.signal);
      if (acknowledgedCursor !== body.throughCursor) throw error;
      return { acknowledgedCursor, replayed: true };
    }
  }

  /**
   * streamRepositoryRoom / streamBranchRoom by `target.branchId`: a resumable consumer of the room's
   * `message` events, following spec 6 rule 8 (see {@link ChatEventStream}).
   */
  streamRoom(target: RoomStreamTarget, options: StreamOptions = {}): ChatEventStream<RoomMessageEvent> {
    const path = `${roomPath(target)}/events`;
    return new ChatEventStream<RoomMessageEvent>(this.transport, { path, durableEvent: 'message', lastEventId: target.lastEventId }, options);
  }

  /** streamRepositoryInbox: a resumable consumer of the caller's `notification` events in a repository. */
  streamInbox(target: InboxStreamTarget, options: StreamOptions = {}): ChatEventStream<InboxNotificationEvent> {
    const path = `${inboxPath(target.repositoryId)}/events`;
    return new ChatEventStream<InboxNotificationEvent>(this.transport, { path, durableEvent: 'notification', lastEventId: target.lastEventId }, options);
  }
}
