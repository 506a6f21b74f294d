import { signal } from '@preact/signals';
import { ChatApiError, type ChatClient, type ChatEventStream, type InboxNotificationEvent, type NotificationResponse } from '@chat/client';

const PAGE_SIZE = 200;

/**
 * This person's mention inbox in one repository: the notifications after the acknowledged
 * checkpoint (the unread ones), kept live through the inbox stream.
 */
export class InboxFeed {
  readonly unread = signal<readonly NotificationResponse[]>([]);
  readonly acknowledgedCursor = signal<string | null>(null);
  readonly notice = signal<string | undefined>(undefined);
  private stream: ChatEventStream<InboxNotificationEvent> | undefined;
  private closed = false;

  constructor(
    private readonly client: ChatClient,
    readonly repositoryId: string,
    private readonly hooks: {
      onNotification(notification: NotificationResponse): void;
      /** Chat no longer takes this sign-in (401). */
      onAccessLost(error: Error): void;
    },
  ) {}

  /**
   * Takes a failed read or acknowledgement: a refused sign-in (401) ends the session; anything else
   * leaves the inbox as it was, as the room view reports access and connection problems.
   */
  failed(error: unknown): void {
    if (error instanceof ChatApiError && error.status === 401) this.hooks.onAccessLost(error);
  }

  /** Reads the checkpoint and every notification after it, then follows the inbox live. */
  async refresh(): Promise<void> {
    this.stream?.close();
    const first = await this.client.listRepositoryInbox(this.repositoryId, { limit: 1 });
    const checkpoint = first.acknowledgedCursor ?? null;
    const unread: NotificationResponse[] = [];
    for await (const notification of this.client.inboxNotifications({ repositoryId: this.repositoryId, after: checkpoint, pageSize: PAGE_SIZE })) {
      if (!notification.acknowledged) unread.push(notification);
    }
    if (this.closed) return;
    this.acknowledgedCursor.value = checkpoint;
    this.unread.value = unread;
    void this.follow(unread.at(-1)?.cursor ?? checkpoint);
  }

  private async follow(lastEventId: string | null): Promise<void> {
    const stream = this.client.streamInbox({ repositoryId: this.repositoryId, lastEventId });
    this.stream = stream;
    try {
      await stream.run((event) => {
        if (this.unread.value.some((n) => n.notificationId === event.data.notificationId) || event.data.acknowledged) return;
        this.unread.value = [...this.unread.value, event.data];
        this.hooks.onNotification(event.data);
      });
    } catch {
      // The inbox is secondary: the room view reports access and connection problems.
    }
  }

  /**
   * Moves the checkpoint through `notification`, as a compare-and-set on the checkpoint this view
   * last read; when another tab or client moved it meanwhile (409), the inbox is read again.
   */
  async acknowledgeThrough(notification: NotificationResponse): Promise<void> {
    this.notice.value = undefined;
    try {
      const result = await this.client.acknowledgeRepositoryInbox(this.repositoryId, { throughCursor: notification.cursor, expectedCursor: this.acknowledgedCursor.value });
      this.acknowledgedCursor.value = result.acknowledgedCursor;
      const index = this.unread.value.findIndex((n) => n.notificationId === notification.notificationId);
      this.unread.value = this.unread.value.slice(index + 1);
    } catch (error) {
      if (!(error instanceof ChatApiError) || error.status !== 409) return this.failed(error);
      this.notice.value = 'Your inbox changed in another window; it has been refreshed.';
      await this.refresh().catch((again: unknown) => this.failed(again));
    }
  }

  close(): void {
    this.closed = true;
    this.stream?.close();
  }
}
