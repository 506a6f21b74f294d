/**
 * Types generated from clients/contracts/openapi.json by openapi-typescript.
 * Do not edit: run `pnpm --filter @chat/client types:generate` and commit the result.
 */
export interface paths {
    "/v1/inbox": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's notifications in every repository it may read, in feed order (extension) */
        get: operations["listPrincipalInbox"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/inbox/acknowledgements": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Move the caller's feed checkpoint, and with it each repository inbox checkpoint (extension) */
        post: operations["acknowledgePrincipalInbox"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/inbox/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Stream the caller's notifications in every repository it may read (extension) */
        get: operations["streamPrincipalInbox"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/branches/{branchId}/room": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a branch room */
        get: operations["getBranchRoom"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/branches/{branchId}/room/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Stream a branch room */
        get: operations["streamBranchRoom"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/branches/{branchId}/room/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a branch room from its newest message, or before, after or at a message (extension) */
        get: operations["listBranchMessageHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/branches/{branchId}/room/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List branch room messages, oldest first */
        get: operations["listBranchMessages"];
        put?: never;
        /** Append a message to a branch room */
        post: operations["appendBranchMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/branches/{branchId}/room/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Search the messages of a branch room (extension) */
        get: operations["searchBranchRoom"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/inbox": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's inbox for a repository */
        get: operations["listRepositoryInbox"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/inbox/acknowledgements": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Move the caller's inbox checkpoint */
        post: operations["acknowledgeRepositoryInbox"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/inbox/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Stream the caller's inbox for a repository */
        get: operations["streamRepositoryInbox"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/room": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get the repository room */
        get: operations["getRepositoryRoom"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/room/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Stream the repository room */
        get: operations["streamRepositoryRoom"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/room/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read the repository room from its newest message, or before, after or at a message (extension) */
        get: operations["listRepositoryMessageHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/room/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List repository room messages, oldest first */
        get: operations["listRepositoryMessages"];
        put?: never;
        /** Append a message to the repository room */
        post: operations["appendRepositoryMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/room/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Search the messages of the repository room (extension) */
        get: operations["searchRepositoryRoom"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/repositories/{repositoryId}/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Search the messages of the repository room and all its branch rooms (extension) */
        get: operations["searchRepository"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's webhooks (extension) */
        get: operations["listWebhooks"];
        put?: never;
        /** Register a webhook that receives the caller's notifications by signed POST (extension) */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhookId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove one of the caller's webhooks, with its pending deliveries and dead letters (extension) */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhookId}/dead-letters": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the deliveries of a webhook that failed every attempt (extension) */
        get: operations["listWebhookDeadLetters"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhookId}/redeliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Deliver dead letters of a webhook again (extension) */
        post: operations["redeliverWebhookDeliveries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description Moves the inbox checkpoint. */
        AcknowledgeInboxRequest: {
            /** @description When given, must equal the current checkpoint, else 409 INBOX_CHECKPOINT_STALE. */
            expectedCursor?: string | null;
            /** @description Move the checkpoint forward through this inbox cursor. */
            throughCursor: string;
        };
        /** @description The inbox checkpoint after an acknowledgement. */
        AcknowledgeInboxResponse: {
            acknowledgedCursor: string;
            /** @description True when the request had already been applied. */
            replayed: boolean;
        };
        /** @description A new message for a room. */
        AppendMessageRequest: {
            /** @description Markdown source, 1–16,384 decoded UTF-8 bytes. */
            bodyMarkdown: string;
            mentions?: components["schemas"]["MentionBinding"][];
        };
        /** @description Registers a webhook for the caller (extension). */
        CreateWebhookRequest: {
            /** @description The HMAC-SHA256 key of the delivery signatures: 16 to 256 printable ASCII characters. When absent the service makes one (32 random bytes, base64url). */
            secret?: string;
            /** @description `https://` URL of the receiver (plain `http://` only to loopback where the service allows loopback); no credentials, no fragment, and no private, loopback or link-local address. */
            url: string;
        };
        /** @description The registered webhook and its signing secret (extension). */
        CreateWebhookResponse: {
            /** @description The signing secret, given or made: shown in this answer only; keep it with the receiver. */
            secret: string;
            webhook: components["schemas"]["Webhook"];
        };
        /** @description What went wrong. */
        ErrorBody: {
            /**
             * @description One of the error codes of spec section 7.
             * @enum {string}
             */
            code: "AUTHENTICATION_REQUIRED" | "AUTHORIZATION_DENIED" | "AUTHORIZATION_REQUEST_INVALID" | "AUTHORIZATION_UNAVAILABLE" | "CORE_RESOURCE_TOKEN_REJECTED" | "CORE_RESOURCE_TOKEN_REQUIRED" | "CURSOR_CONFLICT" | "CURSOR_INVALID" | "CURSOR_UNAVAILABLE" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_REUSED" | "INBOX_CHECKPOINT_STALE" | "LIMIT_INVALID" | "MESSAGE_BUILD_FAILED" | "MESSAGE_INVALID" | "MENTION_INVALID" | "MENTION_TARGET_INVALID" | "RATE_LIMITED" | "REQUEST_ID_INVALID" | "REQUEST_INVALID" | "RESOURCE_CONFLICT" | "RESOURCE_NOT_FOUND" | "RESPONSE_INVALID" | "ROOM_CREATE_UNAVAILABLE" | "ROOM_INCOHERENT" | "ROOM_SEALED" | "SCOPE_INVALID" | "STORE_UNAVAILABLE" | "STREAM_HANDOFF_FAILED" | "STREAM_PRINCIPAL_LIMIT" | "STREAM_ROOM_LIMIT" | "STREAM_TARGET_INVALID" | "STREAM_UNAVAILABLE" | "TOKEN_REJECTED";
            /** @description Human-readable; never carries secrets or internals. */
            message: string;
            /** @description Same value as the X-Request-Id response header. */
            requestId: string;
        };
        /** @description The one structured envelope of every error response. */
        ErrorEnvelope: {
            error: components["schemas"]["ErrorBody"];
        };
        /** @description One mention of the caller on its principal inbox stream, with its message when asked for. */
        FeedNotificationResponse: {
            acknowledged: boolean;
            branchId?: string | null;
            /** Format: date-time */
            createdAt: string;
            /** @description Opaque inbox cursor of this notification. */
            cursor: string;
            /** @description The notified message, when the stream was opened with `include=message`. */
            message?: components["schemas"]["MessageResponse"];
            messageId: string;
            notificationId: string;
            repositoryId: string;
            roomId: string;
            senderId: string;
            senderKind: components["schemas"]["SenderKind"];
            spans: components["schemas"]["MentionSpan"][];
            targetId: string;
            targetKind: components["schemas"]["MentionPrincipalKind"];
        };
        /** @description Data of a `handoff` event: planned rotation; reconnect from the last durable cursor. */
        HandoffEventData: {
            /** @constant */
            reason: "stream_rotation";
        };
        /** @description Data of a `heartbeat` event: liveness only; never advances resume state. */
        HeartbeatEventData: {
            /**
             * Format: date-time
             * @description Server clock when the heartbeat was sent.
             */
            serverTime: string;
        };
        /** @description A page of the caller's inbox, oldest first. */
        InboxPageResponse: {
            /** @description The current acknowledged checkpoint, if any. */
            acknowledgedCursor?: string | null;
            items: components["schemas"]["NotificationResponse"][];
            /** @description Cursor of the next page; null when there is none yet. */
            nextCursor?: string | null;
        };
        /** @description A structured mention of a human or bot, used in requests and responses. */
        MentionBinding: {
            /**
             * Format: int32
             * @description Offset just past the last byte of the mention in the UTF-8 body.
             */
            endByte: number;
            principalId: string;
            principalKind: components["schemas"]["MentionPrincipalKind"];
            /**
             * Format: int32
             * @description Offset of the first byte of the mention in the UTF-8 body.
             */
            startByte: number;
        };
        /**
         * @description Kind of a mentioned principal (and of an inbox owner).
         * @enum {string}
         */
        MentionPrincipalKind: "human" | "bot";
        /** @description A UTF-8 byte range of a message body. */
        MentionSpan: {
            /** Format: int32 */
            endByte: number;
            /** Format: int32 */
            startByte: number;
        };
        /** @description The stored form of an immutable message. */
        Message: {
            authorizationDecisionId?: string | null;
            authorizingSubjectId?: string | null;
            authorizingSubjectKind?: components["schemas"]["SubjectKind"] | null;
            /**
             * Format: int32
             * @description Length of bodyMarkdown in UTF-8 bytes.
             */
            bodyBytes: number;
            /** @description Markdown source, 1–16,384 UTF-8 bytes. Never inject it as HTML. */
            bodyMarkdown: string;
            botCredentialId?: string | null;
            botGrantId?: string | null;
            branchId?: string | null;
            /** Format: date-time */
            createdAt: string;
            idempotencyKey: string;
            mentions?: components["schemas"]["MentionBinding"][];
            messageId: string;
            repositoryId: string;
            requestId: string;
            roomId: string;
            senderId: string;
            senderKind: components["schemas"]["SenderKind"];
        };
        /** @description A run of consecutive messages, oldest first, with the durable cursor of each (extension). */
        MessageHistoryPageResponse: {
            /** @description `cursors[i]` is the durable cursor of `items[i]`, equal to the SSE id of its `message` event: `cursor` (list, stream) or `after` continues after it, `before` continues before it, `at` starts at it. */
            cursors: string[];
            items: components["schemas"]["MessageResponse"][];
            /** @description Pass as `after` to read the messages just newer than this page; null when there were none when the page was read (follow the stream from the last item's cursor to see later ones). */
            newerCursor?: string | null;
            /** @description Pass as `before` to read the messages just older than this page; null when there are none. */
            olderCursor?: string | null;
        };
        /** @description A page of messages, oldest first. */
        MessagePageResponse: {
            items: components["schemas"]["MessageResponse"][];
            /** @description Cursor of the next page; null when there is none yet. */
            nextCursor?: string | null;
        };
        /** @description An immutable message with its server-sanitized rendering and attribution. */
        MessageResponse: {
            authorizationDecisionId?: string | null;
            authorizingSubjectId?: string | null;
            authorizingSubjectKind?: components["schemas"]["SubjectKind"] | null;
            /**
             * Format: int32
             * @description Length of bodyMarkdown in UTF-8 bytes.
             */
            bodyBytes: number;
            /** @description Markdown source, 1–16,384 UTF-8 bytes. Never inject it as HTML. */
            bodyMarkdown: string;
            botCredentialId?: string | null;
            botGrantId?: string | null;
            branchId?: string | null;
            /** Format: date-time */
            createdAt: string;
            idempotencyKey: string;
            mentions?: components["schemas"]["MentionBinding"][];
            messageId: string;
            /** @description Server-sanitized HTML rendering of bodyMarkdown. */
            renderedHtml: string;
            /** @description Display renderedHtml only when this is exactly "sanitized_markdown_html_v1"; otherwise show escaped plain text. */
            renderPolicy: string;
            repositoryId: string;
            requestId: string;
            roomId: string;
            senderId: string;
            senderKind: components["schemas"]["SenderKind"];
        };
        /** @description The stored form of one mention of one principal. */
        Notification: {
            branchId?: string | null;
            /** Format: date-time */
            createdAt: string;
            messageId: string;
            notificationId: string;
            repositoryId: string;
            roomId: string;
            senderId: string;
            senderKind: components["schemas"]["SenderKind"];
            spans: components["schemas"]["MentionSpan"][];
            targetId: string;
            targetKind: components["schemas"]["MentionPrincipalKind"];
        };
        /** @description One mention of the caller, as listed in the inbox. */
        NotificationResponse: {
            acknowledged: boolean;
            branchId?: string | null;
            /** Format: date-time */
            createdAt: string;
            /** @description Opaque inbox cursor of this notification. */
            cursor: string;
            messageId: string;
            notificationId: string;
            repositoryId: string;
            roomId: string;
            senderId: string;
            senderKind: components["schemas"]["SenderKind"];
            spans: components["schemas"]["MentionSpan"][];
            targetId: string;
            targetKind: components["schemas"]["MentionPrincipalKind"];
        };
        /** @description Data of a `reauthorize` event: the server closes the stream; refresh authority before reconnecting. */
        ReauthorizeEventData: {
            /** @description Short machine word saying why. */
            reason: string;
        };
        /** @description Asks for dead letters to be delivered again (extension). */
        RedeliverWebhookRequest: {
            /** @description The dead letters to send again (1 to 100 delivery IDs); absent: every dead letter of the webhook. */
            deliveryIds?: string[];
        };
        /** @description The dead letters now waiting for redelivery (extension). */
        RedeliverWebhookResponse: {
            /** @description The delivery IDs queued for delivery again; a named ID that is not a dead letter in state `dead` of this webhook is left out. */
            redelivering: string[];
        };
        /**
         * @description Whether a room is the repository-wide room or one branch's room.
         * @enum {string}
         */
        RoomKind: "repository" | "branch";
        /** @description A repository room or a branch room. */
        RoomResponse: {
            /** @description The branch, for branch rooms. */
            branchId?: string | null;
            createdAt?: string | null;
            kind: components["schemas"]["RoomKind"];
            lastMessageAt?: string | null;
            /** Format: int64 */
            messageCount: number;
            /** @description False for an empty virtual room that has not been stored yet. */
            persisted: boolean;
            repositoryId: string;
            roomId?: string | null;
            sealedAt?: string | null;
            state: components["schemas"]["RoomState"];
            version?: number | null;
        };
        /**
         * @description An active room accepts appends; a sealed room stays readable and rejects appends with ROOM_SEALED.
         * @enum {string}
         */
        RoomState: "active" | "sealed";
        /** @description A run of plain text of a message body (no markup: render it with your own escaping), marked when the query matched it. */
        SearchHighlightRun: {
            /** @description True when `text` is what the query matched. */
            match: boolean;
            text: string;
        };
        /** @description A page of search results, in the order asked for (extension). */
        SearchPageResponse: {
            items: components["schemas"]["SearchResult"][];
            /** @description Pass as `cursor`, with the same `q` and `order`, for the next page; null when no more messages matched. */
            nextCursor?: string | null;
        };
        /** @description One message that matches a search (extension). */
        SearchResult: {
            /** @description The branch of the message's room; null for the repository room. */
            branchId?: string | null;
            /** @description The durable cursor of the message in its room (the same one the list, the stream and the history read give): pass it as `at` to the room's history read to open the room at the message. */
            cursor: string;
            /** @description Up to 3 fragments of the body around what matched, in body order, each a list of runs; empty when the query has no words or phrases (filters only). */
            highlights: components["schemas"]["SearchHighlightRun"][][];
            message: components["schemas"]["MessageResponse"];
            roomId: string;
        };
        /**
         * @description Who authored a message.
         * @enum {string}
         */
        SenderKind: "user" | "bot";
        /**
         * @description Kind of the subject whose authority allowed a bot action.
         * @enum {string}
         */
        SubjectKind: "user" | "organization";
        /** @description A webhook of the caller: an HTTPS endpoint that receives the caller's notifications by signed POST (extension). Its secret is never shown again after registration. */
        Webhook: {
            /** Format: date-time */
            createdAt: string;
            /** @description Where deliveries are POSTed, as the service parsed it at registration. */
            url: string;
            webhookId: string;
        };
        /** @description A delivery every attempt of which failed, with its notification as the repository inbox shows it (extension). */
        WebhookDeadLetter: {
            /**
             * Format: int32
             * @description Attempts made so far, redeliveries included.
             */
            attempts: number;
            /**
             * Format: date-time
             * @description When the delivery was given up.
             */
            deadAt: string;
            /** @description The delivery's ID (`<webhookId>.<notificationId>`), the same on every attempt and redelivery. */
            deliveryId: string;
            /** @description What the last attempt met: an HTTP status, a timeout, a refused address. */
            lastError: string;
            notification: components["schemas"]["NotificationResponse"];
            state: components["schemas"]["WebhookDeadLetterState"];
        };
        /** @description A page of a webhook's dead letters (extension). */
        WebhookDeadLetterPageResponse: {
            /** @description Dead letters in the order they died (`deadAt`, then `deliveryId`). */
            items: components["schemas"]["WebhookDeadLetter"][];
            /** @description Pass as `cursor` for the next page; null when no more dead letters follow. */
            nextCursor?: string | null;
        };
        /**
         * @description `dead`: every attempt failed and it waits for a redelivery request; `redelivering`: asked for again and not yet delivered.
         * @enum {string}
         */
        WebhookDeadLetterState: "dead" | "redelivering";
        /** @description The caller's webhooks (extension). */
        WebhookListResponse: {
            /** @description The caller's webhooks, oldest first. */
            items: components["schemas"]["Webhook"][];
        };
    };
    responses: {
        /** @description Invalid scope, limit, cursor, header, message or request ID. */
        BadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description The request conflicts with the current state (see the operation). */
        Conflict: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description Read denied, or write / append capability denied on appends (AUTHORIZATION_DENIED). */
        Forbidden: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description The notification is unavailable to the principal. */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description Authorization, persistence or the stream listener is unavailable. */
        ServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["RetryAfterHint"];
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description A rate limit or stream cap was reached; retry after `Retry-After` seconds. */
        TooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["RetryAfter"];
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description Bearer token missing or rejected (AUTHENTICATION_REQUIRED or TOKEN_REJECTED). */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
    };
    parameters: {
        /** @description A message cursor of this room: read the `limit` messages just after that message, as `cursor` on the list does. */
        After: string;
        /** @description A message cursor of this room: read that message and the `limit` - 1 messages after it. */
        At: string;
        /** @description A message cursor of this room: read the `limit` messages just before that message. At most one of `before`, `after`, `at` (CURSOR_CONFLICT); invalid, forged or cross-room values give CURSOR_INVALID. */
        Before: string;
        /** @description Canonical ULID of the branch (never reused across delete and recreate). */
        BranchId: string;
        /** @description Bearer-form core OAuth resource credential; required only for human-authored structured mentions. */
        CoreAuthorization: string;
        /** @description Opaque cursor from this room or inbox. Invalid, forged, non-canonical or cross-room values give CURSOR_INVALID. */
        Cursor: string;
        /** @description The `nextCursor` of the previous page of this webhook's dead letters; another webhook's, a forged, edited or any other kind of cursor gives CURSOR_INVALID. */
        DeadLetterCursor: string;
        /** @description Opaque feed cursor of the caller, from listPrincipalInbox or streamPrincipalInbox. Room and repository inbox cursors, forged, non-canonical or another principal's values give CURSOR_INVALID. */
        FeedCursor: string;
        /** @description `message`: each notification event carries the notified message (`message`), so a client needs no request to read it. Any other value gives REQUEST_INVALID. */
        FeedInclude: "message";
        /** @description Canonical ULID, scoped to the authenticated sender and room; else IDEMPOTENCY_KEY_INVALID. */
        IdempotencyKey: string;
        /** @description Last durable cursor processed. Must not conflict with `cursor` (CURSOR_CONFLICT). */
        LastEventId: string;
        /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
        Limit: number;
        /** @description Canonical ULID of the repository. */
        RepositoryId: string;
        /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
        RequestId: string;
        /** @description The `nextCursor` of the previous page of the same search (same `q`, `order` and scope); anything else gives CURSOR_INVALID. */
        SearchCursor: string;
        /** @description `relevance` (the default): most relevant first; `newest`: newest first by (createdAt, messageId). Else REQUEST_INVALID. */
        SearchOrder: "relevance" | "newest";
        /** @description The search (docs/interface.md, "Extensions": search): words, each found anywhere in a message (3 characters or more match inside words and identifiers), `"exact phrases"`, and filters `from:<principal ID>`, `mentions:<principal ID>`, `in:repository` or `in:<branch ULID>`, `before:<ISO date>`, `after:<ISO date>`, `has:code`, `has:link`. 1 to 512 characters; else REQUEST_INVALID. */
        SearchQuery: string;
        /** @description Canonical ULID of one of the caller's webhooks. */
        WebhookId: string;
    };
    requestBodies: never;
    headers: {
        /** @description Whole seconds to wait before retrying. */
        RetryAfter: number;
        /** @description Whole seconds to wait before retrying, when the service knows (STORE_UNAVAILABLE, STREAM_UNAVAILABLE); absent otherwise (AUTHORIZATION_UNAVAILABLE). */
        RetryAfterHint: number;
        /** @description The request ID: the client's X-Request-Id, or one the server made. Error bodies repeat it. */
        XRequestId: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listPrincipalInbox: {
        parameters: {
            query?: {
                /** @description Opaque feed cursor of the caller, from listPrincipalInbox or streamPrincipalInbox. Room and repository inbox cursors, forged, non-canonical or another principal's values give CURSOR_INVALID. */
                cursor?: components["parameters"]["FeedCursor"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the caller's feed after `cursor`, in feed order, leaving out notifications of repositories the caller may not read now. Each item's `cursor` is its own repository inbox cursor; `nextCursor` (null at the end of the feed) and `acknowledgedCursor` (null before any acknowledgement) are feed cursors. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InboxPageResponse"];
                };
            };
            /** @description LIMIT_INVALID, or CURSOR_INVALID: not a feed cursor of the caller (forged, edited, another principal's, or a room or repository inbox cursor). */
            400: components["responses"]["BadRequest"];
            /** @description AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential). */
            401: components["responses"]["Unauthorized"];
            /** @description AUTHORIZATION_UNAVAILABLE: core could not say which repositories the caller may read; STORE_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    acknowledgePrincipalInbox: {
        parameters: {
            query?: never;
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AcknowledgeInboxRequest"];
            };
        };
        responses: {
            /** @description The feed checkpoint, a feed cursor, after the acknowledgement. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AcknowledgeInboxResponse"];
                };
            };
            /** @description REQUEST_INVALID (not an AcknowledgeInboxRequest), or CURSOR_INVALID: not a feed cursor of the caller (forged, edited, another principal's, or a room or repository inbox cursor). */
            400: components["responses"]["BadRequest"];
            /** @description AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential). */
            401: components["responses"]["Unauthorized"];
            /** @description No notification of the caller's feed is at `throughCursor`. */
            404: components["responses"]["NotFound"];
            /** @description INBOX_CHECKPOINT_STALE: `expectedCursor` differs from the feed checkpoint. */
            409: components["responses"]["Conflict"];
            /** @description AUTHORIZATION_UNAVAILABLE: core could not confirm the caller; STORE_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    streamPrincipalInbox: {
        parameters: {
            query?: {
                /** @description Opaque feed cursor of the caller, from listPrincipalInbox or streamPrincipalInbox. Room and repository inbox cursors, forged, non-canonical or another principal's values give CURSOR_INVALID. */
                cursor?: components["parameters"]["FeedCursor"];
                /** @description `message`: each notification event carries the notified message (`message`), so a client needs no request to read it. Any other value gives REQUEST_INVALID. */
                include?: components["parameters"]["FeedInclude"];
            };
            header?: {
                /** @description Last durable cursor processed. Must not conflict with `cursor` (CURSOR_CONFLICT). */
                "Last-Event-ID"?: components["parameters"]["LastEventId"];
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description A text/event-stream. Events, whose `data` is one JSON document of the named component schema:
             *     - `notification` (SSE id: durable feed cursor (valid as `cursor` on listPrincipalInbox); data: FeedNotificationResponse): one notification of a repository the caller may read, in feed order; its `cursor` is its repository inbox cursor; with `include=message`, its `message` is the notified message; only notification events carry durable IDs.
             *     - `heartbeat` (SSE id: none; data: HeartbeatEventData): liveness signal with server time; never advances resume state.
             *     - `handoff` (SSE id: none; data: HandoffEventData): planned server rotation (reason `stream_rotation`); reconnect from the last durable cursor.
             *     - `reauthorize` (SSE id: none; data: ReauthorizeEventData): access changed or could not be confirmed; the server closes the stream; refresh authority before reconnecting.
             *     No other event kinds are sent. Reconnect with the last durable cursor in `Last-Event-ID`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description CURSOR_CONFLICT (`Last-Event-ID` and `cursor` differ), CURSOR_INVALID: not a feed cursor of the caller (forged, edited, another principal's, or a room or repository inbox cursor), or REQUEST_INVALID: `include` is not `message`. */
            400: components["responses"]["BadRequest"];
            /** @description AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential). */
            401: components["responses"]["Unauthorized"];
            /** @description STREAM_UNAVAILABLE with `Retry-After`: the caller already holds as many inbox streams as its per-principal cap allows (this stream counts as one), or the stream listener is unavailable; AUTHORIZATION_UNAVAILABLE or STORE_UNAVAILABLE: core or the store is unavailable. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getBranchRoom: {
        parameters: {
            query?: never;
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the branch (never reused across delete and recreate). */
                branchId: components["parameters"]["BranchId"];
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The room; an empty virtual room (`persisted` false) when none is stored yet. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RoomResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    streamBranchRoom: {
        parameters: {
            query?: {
                /** @description Opaque cursor from this room or inbox. Invalid, forged, non-canonical or cross-room values give CURSOR_INVALID. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Last durable cursor processed. Must not conflict with `cursor` (CURSOR_CONFLICT). */
                "Last-Event-ID"?: components["parameters"]["LastEventId"];
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the branch (never reused across delete and recreate). */
                branchId: components["parameters"]["BranchId"];
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description A text/event-stream. Events, whose `data` is one JSON document of the named component schema:
             *     - `message` (SSE id: durable message cursor (valid as `cursor` on the list operation); data: MessageResponse): one committed message, in (createdAt, messageId) order.
             *     - `heartbeat` (SSE id: none; data: HeartbeatEventData): liveness signal with server time; never advances resume state.
             *     - `handoff` (SSE id: none; data: HandoffEventData): planned server rotation (reason `stream_rotation`); reconnect from the last durable cursor.
             *     - `reauthorize` (SSE id: none; data: ReauthorizeEventData): access changed or could not be confirmed; the server closes the stream; refresh authority before reconnecting.
             *     No other event kinds are sent. Reconnect with the last durable cursor in `Last-Event-ID`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The room is virtual and its scope is sealed, so it cannot be materialized. */
            409: components["responses"]["Conflict"];
            /** @description STREAM_PRINCIPAL_LIMIT or STREAM_ROOM_LIMIT: a stream cap is reached; retry after `Retry-After` seconds. */
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listBranchMessageHistory: {
        parameters: {
            query?: {
                /** @description A message cursor of this room: read the `limit` messages just after that message, as `cursor` on the list does. */
                after?: components["parameters"]["After"];
                /** @description A message cursor of this room: read that message and the `limit` - 1 messages after it. */
                at?: components["parameters"]["At"];
                /** @description A message cursor of this room: read the `limit` messages just before that message. At most one of `before`, `after`, `at` (CURSOR_CONFLICT); invalid, forged or cross-room values give CURSOR_INVALID. */
                before?: components["parameters"]["Before"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the branch (never reused across delete and recreate). */
                branchId: components["parameters"]["BranchId"];
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Up to `limit` consecutive messages, oldest first by (createdAt, messageId): the newest ones (no cursor), those just before `before`, those just after `after`, or the one `at` names and those after it. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageHistoryPageResponse"];
                };
            };
            /** @description SCOPE_INVALID, LIMIT_INVALID, CURSOR_INVALID (a cursor of another room, forged or edited, or any cursor while the room has no message) or CURSOR_CONFLICT (more than one of `before`, `after` and `at`). */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listBranchMessages: {
        parameters: {
            query?: {
                /** @description Opaque cursor from this room or inbox. Invalid, forged, non-canonical or cross-room values give CURSOR_INVALID. */
                cursor?: components["parameters"]["Cursor"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the branch (never reused across delete and recreate). */
                branchId: components["parameters"]["BranchId"];
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of messages, oldest first by (createdAt, messageId). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessagePageResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    appendBranchMessage: {
        parameters: {
            query?: never;
            header: {
                /** @description Canonical ULID, scoped to the authenticated sender and room; else IDEMPOTENCY_KEY_INVALID. */
                "Idempotency-Key": components["parameters"]["IdempotencyKey"];
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
                /** @description Bearer-form core OAuth resource credential; required only for human-authored structured mentions. */
                "X-Service-Core-Authorization"?: components["parameters"]["CoreAuthorization"];
            };
            path: {
                /** @description Canonical ULID of the branch (never reused across delete and recreate). */
                branchId: components["parameters"]["BranchId"];
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AppendMessageRequest"];
            };
        };
        responses: {
            /** @description Exact retry with the same Idempotency-Key: the original message. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageResponse"];
                };
            };
            /** @description The new message. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description Write capability (humans) or `message:append` capability (bots) denied. */
            403: components["responses"]["Forbidden"];
            /** @description ROOM_SEALED, IDEMPOTENCY_KEY_REUSED (same key, different Markdown) or RESOURCE_CONFLICT. */
            409: components["responses"]["Conflict"];
            /** @description RATE_LIMITED: retry after `Retry-After` seconds with the same Idempotency-Key. */
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchBranchRoom: {
        parameters: {
            query: {
                /** @description The `nextCursor` of the previous page of the same search (same `q`, `order` and scope); anything else gives CURSOR_INVALID. */
                cursor?: components["parameters"]["SearchCursor"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
                /** @description `relevance` (the default): most relevant first; `newest`: newest first by (createdAt, messageId). Else REQUEST_INVALID. */
                order?: components["parameters"]["SearchOrder"];
                /** @description The search (docs/interface.md, "Extensions": search): words, each found anywhere in a message (3 characters or more match inside words and identifiers), `"exact phrases"`, and filters `from:<principal ID>`, `mentions:<principal ID>`, `in:repository` or `in:<branch ULID>`, `before:<ISO date>`, `after:<ISO date>`, `has:code`, `has:link`. 1 to 512 characters; else REQUEST_INVALID. */
                q: components["parameters"]["SearchQuery"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the branch (never reused across delete and recreate). */
                branchId: components["parameters"]["BranchId"];
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the messages that match `q`, most relevant first (`order=relevance`, the default) or newest first (`order=newest`), each with its room, its durable cursor and highlighted fragments. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchPageResponse"];
                };
            };
            /** @description SCOPE_INVALID; REQUEST_INVALID: `q` missing, empty, longer than 512 characters, or not in the query language (an unclosed quote, an unknown or empty filter, a `from:`/`mentions:` value that is not a principal ID, an `in:` value that is neither `repository` nor a branch ULID or used on a single-room search, a `before:`/`after:` value that is not an ISO 8601 date or date-time, `order` not `relevance` or `newest`); LIMIT_INVALID; CURSOR_INVALID (not a cursor of this search: forged, edited, or from another query, order or scope). */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description Read denied on the repository (humans) or no live `room:read` grant on it (bots), as for every read of its rooms. */
            403: components["responses"]["Forbidden"];
            /** @description RATE_LIMITED: the caller's search budget is spent; retry after `Retry-After` seconds. */
            429: components["responses"]["TooManyRequests"];
            /** @description STORE_UNAVAILABLE with `Retry-After`: the store is unavailable, or the query ran past its time bound (the message says so; narrow the query with more words or filters); AUTHORIZATION_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listRepositoryInbox: {
        parameters: {
            query?: {
                /** @description Opaque cursor from this room or inbox. Invalid, forged, non-canonical or cross-room values give CURSOR_INVALID. */
                cursor?: components["parameters"]["Cursor"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the caller's notifications, with its acknowledged checkpoint. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InboxPageResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    acknowledgeRepositoryInbox: {
        parameters: {
            query?: never;
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AcknowledgeInboxRequest"];
            };
        };
        responses: {
            /** @description The checkpoint after the acknowledgement. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AcknowledgeInboxResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The notification is unavailable to the principal. */
            404: components["responses"]["NotFound"];
            /** @description INBOX_CHECKPOINT_STALE: `expectedCursor` differs from the current checkpoint. */
            409: components["responses"]["Conflict"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    streamRepositoryInbox: {
        parameters: {
            query?: {
                /** @description Opaque cursor from this room or inbox. Invalid, forged, non-canonical or cross-room values give CURSOR_INVALID. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Last durable cursor processed. Must not conflict with `cursor` (CURSOR_CONFLICT). */
                "Last-Event-ID"?: components["parameters"]["LastEventId"];
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description A text/event-stream. Events, whose `data` is one JSON document of the named component schema:
             *     - `notification` (SSE id: durable notification cursor (valid as `cursor` on listRepositoryInbox); data: NotificationResponse): one notification; only notification events carry durable IDs.
             *     - `heartbeat` (SSE id: none; data: HeartbeatEventData): liveness signal with server time; never advances resume state.
             *     - `handoff` (SSE id: none; data: HandoffEventData): planned server rotation (reason `stream_rotation`); reconnect from the last durable cursor.
             *     - `reauthorize` (SSE id: none; data: ReauthorizeEventData): access changed or could not be confirmed; the server closes the stream; refresh authority before reconnecting.
             *     No other event kinds are sent. Reconnect with the last durable cursor in `Last-Event-ID`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description STREAM_UNAVAILABLE with `Retry-After`: the caller already holds as many inbox streams as its per-principal cap allows (all repositories together), or the stream listener is unavailable; AUTHORIZATION_UNAVAILABLE or STORE_UNAVAILABLE: core or the store is unavailable. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getRepositoryRoom: {
        parameters: {
            query?: never;
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The room; an empty virtual room (`persisted` false) when none is stored yet. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RoomResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    streamRepositoryRoom: {
        parameters: {
            query?: {
                /** @description Opaque cursor from this room or inbox. Invalid, forged, non-canonical or cross-room values give CURSOR_INVALID. */
                cursor?: components["parameters"]["Cursor"];
            };
            header?: {
                /** @description Last durable cursor processed. Must not conflict with `cursor` (CURSOR_CONFLICT). */
                "Last-Event-ID"?: components["parameters"]["LastEventId"];
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /**
             * @description A text/event-stream. Events, whose `data` is one JSON document of the named component schema:
             *     - `message` (SSE id: durable message cursor (valid as `cursor` on the list operation); data: MessageResponse): one committed message, in (createdAt, messageId) order.
             *     - `heartbeat` (SSE id: none; data: HeartbeatEventData): liveness signal with server time; never advances resume state.
             *     - `handoff` (SSE id: none; data: HandoffEventData): planned server rotation (reason `stream_rotation`); reconnect from the last durable cursor.
             *     - `reauthorize` (SSE id: none; data: ReauthorizeEventData): access changed or could not be confirmed; the server closes the stream; refresh authority before reconnecting.
             *     No other event kinds are sent. Reconnect with the last durable cursor in `Last-Event-ID`.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description The room is virtual and its scope is sealed, so it cannot be materialized. */
            409: components["responses"]["Conflict"];
            /** @description STREAM_PRINCIPAL_LIMIT or STREAM_ROOM_LIMIT: a stream cap is reached; retry after `Retry-After` seconds. */
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listRepositoryMessageHistory: {
        parameters: {
            query?: {
                /** @description A message cursor of this room: read the `limit` messages just after that message, as `cursor` on the list does. */
                after?: components["parameters"]["After"];
                /** @description A message cursor of this room: read that message and the `limit` - 1 messages after it. */
                at?: components["parameters"]["At"];
                /** @description A message cursor of this room: read the `limit` messages just before that message. At most one of `before`, `after`, `at` (CURSOR_CONFLICT); invalid, forged or cross-room values give CURSOR_INVALID. */
                before?: components["parameters"]["Before"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Up to `limit` consecutive messages, oldest first by (createdAt, messageId): the newest ones (no cursor), those just before `before`, those just after `after`, or the one `at` names and those after it. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageHistoryPageResponse"];
                };
            };
            /** @description SCOPE_INVALID, LIMIT_INVALID, CURSOR_INVALID (a cursor of another room, forged or edited, or any cursor while the room has no message) or CURSOR_CONFLICT (more than one of `before`, `after` and `at`). */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listRepositoryMessages: {
        parameters: {
            query?: {
                /** @description Opaque cursor from this room or inbox. Invalid, forged, non-canonical or cross-room values give CURSOR_INVALID. */
                cursor?: components["parameters"]["Cursor"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of messages, oldest first by (createdAt, messageId). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessagePageResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    appendRepositoryMessage: {
        parameters: {
            query?: never;
            header: {
                /** @description Canonical ULID, scoped to the authenticated sender and room; else IDEMPOTENCY_KEY_INVALID. */
                "Idempotency-Key": components["parameters"]["IdempotencyKey"];
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
                /** @description Bearer-form core OAuth resource credential; required only for human-authored structured mentions. */
                "X-Service-Core-Authorization"?: components["parameters"]["CoreAuthorization"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AppendMessageRequest"];
            };
        };
        responses: {
            /** @description Exact retry with the same Idempotency-Key: the original message. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageResponse"];
                };
            };
            /** @description The new message. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description Write capability (humans) or `message:append` capability (bots) denied. */
            403: components["responses"]["Forbidden"];
            /** @description ROOM_SEALED, IDEMPOTENCY_KEY_REUSED (same key, different Markdown) or RESOURCE_CONFLICT. */
            409: components["responses"]["Conflict"];
            /** @description RATE_LIMITED: retry after `Retry-After` seconds with the same Idempotency-Key. */
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchRepositoryRoom: {
        parameters: {
            query: {
                /** @description The `nextCursor` of the previous page of the same search (same `q`, `order` and scope); anything else gives CURSOR_INVALID. */
                cursor?: components["parameters"]["SearchCursor"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
                /** @description `relevance` (the default): most relevant first; `newest`: newest first by (createdAt, messageId). Else REQUEST_INVALID. */
                order?: components["parameters"]["SearchOrder"];
                /** @description The search (docs/interface.md, "Extensions": search): words, each found anywhere in a message (3 characters or more match inside words and identifiers), `"exact phrases"`, and filters `from:<principal ID>`, `mentions:<principal ID>`, `in:repository` or `in:<branch ULID>`, `before:<ISO date>`, `after:<ISO date>`, `has:code`, `has:link`. 1 to 512 characters; else REQUEST_INVALID. */
                q: components["parameters"]["SearchQuery"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the messages that match `q`, most relevant first (`order=relevance`, the default) or newest first (`order=newest`), each with its room, its durable cursor and highlighted fragments. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchPageResponse"];
                };
            };
            /** @description SCOPE_INVALID; REQUEST_INVALID: `q` missing, empty, longer than 512 characters, or not in the query language (an unclosed quote, an unknown or empty filter, a `from:`/`mentions:` value that is not a principal ID, an `in:` value that is neither `repository` nor a branch ULID or used on a single-room search, a `before:`/`after:` value that is not an ISO 8601 date or date-time, `order` not `relevance` or `newest`); LIMIT_INVALID; CURSOR_INVALID (not a cursor of this search: forged, edited, or from another query, order or scope). */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description Read denied on the repository (humans) or no live `room:read` grant on it (bots), as for every read of its rooms. */
            403: components["responses"]["Forbidden"];
            /** @description RATE_LIMITED: the caller's search budget is spent; retry after `Retry-After` seconds. */
            429: components["responses"]["TooManyRequests"];
            /** @description STORE_UNAVAILABLE with `Retry-After`: the store is unavailable, or the query ran past its time bound (the message says so; narrow the query with more words or filters); AUTHORIZATION_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchRepository: {
        parameters: {
            query: {
                /** @description The `nextCursor` of the previous page of the same search (same `q`, `order` and scope); anything else gives CURSOR_INVALID. */
                cursor?: components["parameters"]["SearchCursor"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
                /** @description `relevance` (the default): most relevant first; `newest`: newest first by (createdAt, messageId). Else REQUEST_INVALID. */
                order?: components["parameters"]["SearchOrder"];
                /** @description The search (docs/interface.md, "Extensions": search): words, each found anywhere in a message (3 characters or more match inside words and identifiers), `"exact phrases"`, and filters `from:<principal ID>`, `mentions:<principal ID>`, `in:repository` or `in:<branch ULID>`, `before:<ISO date>`, `after:<ISO date>`, `has:code`, `has:link`. 1 to 512 characters; else REQUEST_INVALID. */
                q: components["parameters"]["SearchQuery"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of the repository. */
                repositoryId: components["parameters"]["RepositoryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the messages that match `q`, most relevant first (`order=relevance`, the default) or newest first (`order=newest`), each with its room, its durable cursor and highlighted fragments. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchPageResponse"];
                };
            };
            /** @description SCOPE_INVALID; REQUEST_INVALID: `q` missing, empty, longer than 512 characters, or not in the query language (an unclosed quote, an unknown or empty filter, a `from:`/`mentions:` value that is not a principal ID, an `in:` value that is neither `repository` nor a branch ULID or used on a single-room search, a `before:`/`after:` value that is not an ISO 8601 date or date-time, `order` not `relevance` or `newest`); LIMIT_INVALID; CURSOR_INVALID (not a cursor of this search: forged, edited, or from another query, order or scope). */
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description Read denied on the repository (humans) or no live `room:read` grant on it (bots), as for every read of its rooms. */
            403: components["responses"]["Forbidden"];
            /** @description RATE_LIMITED: the caller's search budget is spent; retry after `Retry-After` seconds. */
            429: components["responses"]["TooManyRequests"];
            /** @description STORE_UNAVAILABLE with `Retry-After`: the store is unavailable, or the query ran past its time bound (the message says so; narrow the query with more words or filters); AUTHORIZATION_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller's webhooks, oldest first; their secrets are never shown. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookListResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            /** @description AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential). */
            401: components["responses"]["Unauthorized"];
            /** @description AUTHORIZATION_UNAVAILABLE: core could not confirm the caller; STORE_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateWebhookRequest"];
            };
        };
        responses: {
            /** @description The registered webhook, and its signing secret, which no later answer shows. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreateWebhookResponse"];
                };
            };
            /** @description REQUEST_INVALID: not a CreateWebhookRequest (a `secret` outside 16–256 printable ASCII characters, a `url` longer than 2048 characters), or a URL the service will not send to: not `https` (plain `http` only to loopback where loopback is allowed), credentials or a fragment in it, or a host that is a private, loopback or link-local address (the message says which). */
            400: components["responses"]["BadRequest"];
            /** @description AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential). */
            401: components["responses"]["Unauthorized"];
            /** @description RESOURCE_CONFLICT: the caller already holds as many webhooks as a principal may (`WEBHOOKS_PER_PRINCIPAL`). */
            409: components["responses"]["Conflict"];
            /** @description AUTHORIZATION_UNAVAILABLE: core could not confirm the caller; STORE_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of one of the caller's webhooks. */
                webhookId: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The webhook is removed: nothing more is sent to it, and its dead letters are gone. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            /** @description AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential). */
            401: components["responses"]["Unauthorized"];
            /** @description RESOURCE_NOT_FOUND: the caller has no webhook of this ID (another principal's webhook is answered the same). */
            404: components["responses"]["NotFound"];
            /** @description AUTHORIZATION_UNAVAILABLE: core could not confirm the caller; STORE_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhookDeadLetters: {
        parameters: {
            query?: {
                /** @description The `nextCursor` of the previous page of this webhook's dead letters; another webhook's, a forged, edited or any other kind of cursor gives CURSOR_INVALID. */
                cursor?: components["parameters"]["DeadLetterCursor"];
                /** @description Page size. Effective range 1..200 (otherwise LIMIT_INVALID); 50 when omitted. */
                limit?: components["parameters"]["Limit"];
            };
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of one of the caller's webhooks. */
                webhookId: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the webhook's dead letters in the order they died, each with its notification as its repository inbox shows it; those of repositories the caller may not read now are left out. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeadLetterPageResponse"];
                };
            };
            /** @description LIMIT_INVALID, or CURSOR_INVALID: not a dead-letter cursor of this webhook (forged, edited, another webhook's, or a cursor of another kind). */
            400: components["responses"]["BadRequest"];
            /** @description AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential). */
            401: components["responses"]["Unauthorized"];
            /** @description RESOURCE_NOT_FOUND: the caller has no webhook of this ID (another principal's webhook is answered the same). */
            404: components["responses"]["NotFound"];
            /** @description AUTHORIZATION_UNAVAILABLE: core could not confirm the caller; STORE_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    redeliverWebhookDeliveries: {
        parameters: {
            query?: never;
            header?: {
                /** @description Client-chosen request ID (1–128 characters of [A-Za-z0-9._:-]); else REQUEST_ID_INVALID. The server makes one when absent. */
                "X-Request-Id"?: components["parameters"]["RequestId"];
            };
            path: {
                /** @description Canonical ULID of one of the caller's webhooks. */
                webhookId: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RedeliverWebhookRequest"];
            };
        };
        responses: {
            /** @description The dead letters queued for delivery again, each with its original delivery ID. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RedeliverWebhookResponse"];
                };
            };
            /** @description REQUEST_INVALID: not a RedeliverWebhookRequest (`deliveryIds`, when present, is 1 to 100 non-empty strings). */
            400: components["responses"]["BadRequest"];
            /** @description AUTHENTICATION_REQUIRED, or TOKEN_REJECTED: the token is rejected, or core says its principal is no longer valid (revoked token or bot credential). */
            401: components["responses"]["Unauthorized"];
            /** @description RESOURCE_NOT_FOUND: the caller has no webhook of this ID (another principal's webhook is answered the same). */
            404: components["responses"]["NotFound"];
            /** @description AUTHORIZATION_UNAVAILABLE: core could not confirm the caller; STORE_UNAVAILABLE. */
            503: components["responses"]["ServiceUnavailable"];
        };
    };
}
