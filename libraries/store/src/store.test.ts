import { expect } from 'chai';
import { ulid } from 'ulid';
import { newMessage } from '../test/new-message.ts';
import { testTargets } from '../test/targets.ts';
import { newUlid } from '@chat/contracts';
import { createStore, migrate, nextMessageId, roomScopeKey, type NewMessage, type RoomScope, type Store } from './index.ts';

const appendOptions = (now = new Date()) => ({ newRoomId: ulid(), now });

for (const target of testTargets) {
  describe(`store on ${target.name}`, function () {
    let store: Store;
    let cleanup: () => Promise<void>;
    let scope: RoomScope;

    before(async function () {
      const opened = await target.open();
      store = createStore(opened.database);
      cleanup = opened.cleanup;
    });
    after(async () => cleanup());
    beforeEach(() => {
      scope = { repositoryId: ulid(), branchId: null };
    });

    it('runs migrations again as a no-op', async function () {
      expect(await migrate(store.database)).to.deep.equal({ migrations: [], functions: [] });
    });

    it('creates the room on first append and numbers messages contiguously', async function () {
      expect(await store.rooms.find(scope)).to.equal(null);
      for (let i = 0; i < 5; i++) {
        const outcome = await store.messages.append(scope, newMessage(), appendOptions());
        expect(outcome.kind).to.equal('created');
        if (outcome.kind === 'created') expect(outcome.message.seq).to.equal(i + 1);
      }
      const room = await store.rooms.find(scope);
      expect(room?.lastSeq).to.equal(5);
      expect(room?.kind).to.equal('repository');
      const listed = await store.messages.listAfter(room!.roomId, 0, 10);
      expect(listed.map((m) => m.seq)).to.deep.equal([1, 2, 3, 4, 5]);
      expect((await store.messages.listAfter(room!.roomId, 3, 10)).map((m) => m.seq)).to.deep.equal([4, 5]);
    });

    it('lists the messages before a seq, oldest first, the last ones of the range', async function () {
      for (let i = 0; i < 7; i++) await store.messages.append(scope, newMessage(), appendOptions());
      const room = await store.rooms.find(scope);
      const seqs = async (beforeSeq: number, limit: number) => (await store.messages.listBefore(room!.roomId, beforeSeq, limit)).map((m) => m.seq);
      expect(await seqs(room!.lastSeq + 1, 3)).to.deep.equal([5, 6, 7]);
      expect(await seqs(5, 3)).to.deep.equal([2, 3, 4]);
      expect(await seqs(3, 10)).to.deep.equal([1, 2]);
      expect(await seqs(1, 10)).to.deep.equal([]);
      expect(await store.messages.listBefore(ulid(), 10, 10)).to.deep.equal([]);
    });

    it('reads a page before a seq by a backward scan of the primary key, however large the room', async function () {
      // The planner's choice for a large room is the one that matters: a bitmap or sequential scan
      // of the room followed by a sort would cost the whole room on every page. (For a room it
      // believes nearly empty, a sort of two rows is the right plan, so the room here is large and
      // the table's statistics say so.)
      await store.messages.append(scope, newMessage(), appendOptions());
      const room = await store.rooms.find(scope);
      const roomSize = 20_000;
      await store.database.sql.query(
        {
          text: `INSERT INTO messages (room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id, request_id,
              idempotency_key, body_markdown, body_bytes, rendered_html, mentions, created_at)
            SELECT m.room_id, m.seq + n, m.message_id || '-' || n, m.repository_id, m.branch_id, m.sender_kind, m.sender_id,
              m.request_id, m.idempotency_key || '-' || n, m.body_markdown, m.body_bytes, m.rendered_html, m.mentions, m.created_at
            FROM messages m, generate_series(1, $2::int) n WHERE m.room_id = $1`,
        },
        [room!.roomId, roomSize - 1],
      );
      await store.database.exec('ANALYZE messages');
      const plan = await store.database.sql.query<Record<string, string>>(
        { text: 'EXPLAIN SELECT * FROM messages WHERE room_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3' },
        [room!.roomId, roomSize + 1, 100],
      );
      const text = plan.map((row) => Object.values(row).join(' ')).join('\n');
      expect(text).to.match(/Index Scan Backward using messages_pkey/);
      expect(text).not.to.match(/Sort|Seq Scan/);
    });

    it('keeps (createdAt, messageId) in commit order even when the clock stands still or goes back', async function () {
      const t = new Date('2026-01-01T00:00:00.000Z');
      const times = [t, t, new Date(t.getTime() - 5000), new Date(t.getTime() + 1)];
      const ids: Array<[number, string]> = [];
      for (const now of times) {
        const outcome = await store.messages.append(scope, newMessage(), appendOptions(now));
        if (outcome.kind !== 'created') throw new Error('expected created');
        ids.push([outcome.message.createdAt.getTime(), outcome.message.messageId]);
      }
      const sorted = [...ids].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      expect(sorted).to.deep.equal(ids);
      expect(new Set(ids.map((i) => i[1])).size).to.equal(ids.length);
    });

    it('replays an existing idempotency key per sender and room instead of appending', async function () {
      const message = newMessage();
      const first = await store.messages.append(scope, message, appendOptions());
      const again = await store.messages.append(scope, { ...message, requestId: ulid() }, appendOptions());
      expect(first.kind).to.equal('created');
      expect(again.kind).to.equal('replayed');
      if (first.kind === 'created' && again.kind === 'replayed') expect(again.message.messageId).to.equal(first.message.messageId);
      const otherSender = await store.messages.append(scope, { ...message, senderId: 'u_bob' }, appendOptions());
      expect(otherSender.kind).to.equal('created');
      const held = await store.messages.hold(scope, { ...message, requestId: ulid() }, appendOptions());
      expect(held.kind === 'replayed' && held.message.bodyMarkdown).to.equal('hello');
    });

    it('makes exactly one message out of concurrent appends with one key', async function () {
      const message = newMessage();
      const outcomes = await Promise.all(Array.from({ length: 12 }, () => store.messages.append(scope, message, appendOptions())));
      expect(outcomes.filter((o) => o.kind === 'created')).to.have.length(1);
      expect(outcomes.filter((o) => o.kind === 'replayed')).to.have.length(11);
      const room = await store.rooms.find(scope);
      expect(room?.lastSeq).to.equal(1);
    });

    it('serializes concurrent appends to one room into a gap-free sequence', async function () {
      await Promise.all(Array.from({ length: 30 }, () => store.messages.append(scope, newMessage(), appendOptions())));
      const room = await store.rooms.find(scope);
      const listed = await store.messages.listAfter(room!.roomId, 0, 100);
      expect(listed.map((m) => m.seq)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i + 1));
    });

    it('appends concurrently across many rooms, across store instances: each room gap-free, each outbox entry its own', async function () {
      // On PostgreSQL a second store (own pool and batcher) competes for the same rooms; PGlite has one.
      const other = target.name === 'postgres' ? await target.open() : null;
      const second = other ? createStore(other.database) : store;
      const scopes = Array.from({ length: 12 }, (_, i) => ({ repositoryId: scope.repositoryId, branchId: i === 0 ? null : ulid() }));
      const outcomes = await Promise.all(
        Array.from({ length: 120 }, (_, i) => [store, second][i % 2]!.messages.append(scopes[(i * 7) % scopes.length]!, newMessage(), appendOptions())),
      );
      expect(outcomes.every((o) => o.kind === 'created')).to.equal(true);
      const outboxIds = new Set(outcomes.map((o) => (o.kind === 'created' ? o.outboxId : -1)));
      expect(outboxIds.size).to.equal(120);
      for (const roomScope of scopes) {
        const room = await store.rooms.find(roomScope);
        const listed = await store.messages.listAfter(room!.roomId, 0, 100);
        expect(listed.map((m) => m.seq)).to.deep.equal(Array.from({ length: 10 }, (_, i) => i + 1));
        const ids = listed.map((m) => m.messageId);
        expect([...ids].sort()).to.deep.equal(ids);
        expect(room!.lastSeq).to.equal(10);
        expect(room!.lastMessageId).to.equal(ids[9]);
      }
      await other?.cleanup();
    });

    it('answers many concurrent holds, retries and new keys across rooms and senders, each retry with its own message', async function () {
      const scopes = [scope, { repositoryId: scope.repositoryId, branchId: ulid() }];
      const stored = [];
      for (const [i, roomScope] of scopes.entries()) {
        for (const senderId of ['u_alice', 'u_bob']) {
          const outcome = await store.messages.append(roomScope, newMessage({ senderId, bodyMarkdown: `m${i}${senderId}` }), appendOptions());
          if (outcome.kind !== 'created') throw new Error('expected created');
          stored.push({ scope: roomScope, message: outcome.message });
        }
      }
      const lookups = stored.flatMap(({ scope: s, message: m }) => [
        { s, kind: m.senderKind, sender: m.senderId, key: m.idempotencyKey, expected: m.messageId },
        // The same key under another sender, or in the other room, is not the message.
        { s, kind: m.senderKind, sender: m.senderId === 'u_alice' ? 'u_bob' : 'u_alice', key: m.idempotencyKey, expected: null },
        { s: scopes.find((x) => x !== s)!, kind: m.senderKind, sender: m.senderId, key: m.idempotencyKey, expected: null },
        { s, kind: 'bot' as const, sender: m.senderId, key: m.idempotencyKey, expected: null },
      ]);
      const answers = await Promise.all(
        lookups.map((l) => store.messages.hold(l.s, newMessage({ senderKind: l.kind, senderId: l.sender, idempotencyKey: l.key }), appendOptions())),
      );
      expect(answers.map((a) => (a.kind === 'replayed' ? a.message.messageId : a.kind))).to.deep.equal(lookups.map((l) => l.expected ?? 'held'));
    });

    it('writes the outbox entry in the append transaction', async function () {
      const outcome = await store.messages.append(scope, newMessage(), appendOptions());
      if (outcome.kind !== 'created') throw new Error('expected created');
      const stale = await store.outbox.listStale(new Date(Date.now() + 60_000), 10_000);
      const entry = stale.find((e) => e.id === outcome.outboxId);
      expect(entry?.scopeKey).to.equal(outcome.message.roomId);
      expect(entry?.seq).to.equal(1);
      // It carries no payload but its stored message, from which the relay makes the wire form.
      expect(entry!.payload).to.equal(null);
      expect(entry!.message).to.deep.equal(outcome.message);
      await store.outbox.remove([outcome.outboxId]);
      await store.outbox.remove([outcome.outboxId]);
    });

    if (target.name === 'pglite') {
      it('runs a relay turn without holding the database: one process, one relay, no lock to take', async function () {
        const outcome = await store.messages.append(scope, newMessage(), appendOptions());
        if (outcome.kind !== 'created') throw new Error('expected created');
        const seenInside = await store.outbox.duringRelayTurn(async (turn) => {
          // A transaction would hold PGlite's only connection: this append would wait for the turn to end.
          const other = await store.messages.append({ repositoryId: ulid(), branchId: null }, newMessage(), appendOptions());
          const entries = await turn.listStale(new Date(Date.now() + 60_000), 100_000);
          await turn.remove([outcome.outboxId]);
          return other.kind === 'created' && entries.some((e) => e.id === outcome.outboxId);
        });
        expect(seenInside).to.equal(true);
        expect((await store.outbox.listStale(new Date(Date.now() + 60_000), 100_000)).some((e) => e.id === outcome.outboxId)).to.equal(false);
      });
    }

    if (target.name === 'postgres') {
      it('keeps what a failed relay turn removed: the turn is one transaction', async function () {
        const outcome = await store.messages.append(scope, newMessage(), appendOptions());
        if (outcome.kind !== 'created') throw new Error('expected created');
        const failed = await store.outbox
          .duringRelayTurn(async (turn) => {
            await turn.remove([outcome.outboxId]);
            throw new Error('the backbone refused the publish');
          })
          .then(
            () => 'resolved',
            (err: Error) => err.message,
          );
        expect(failed).to.equal('the backbone refused the publish');
        const stale = await store.outbox.listStale(new Date(Date.now() + 60_000), 100_000);
        expect(stale.some((e) => e.id === outcome.outboxId), 'the entry waits for the next turn').to.equal(true);
        const removed = await store.outbox.duringRelayTurn(async (turn) => {
          const entries = await turn.listStale(new Date(Date.now() + 60_000), 100_000);
          await turn.remove(entries.filter((e) => e.id === outcome.outboxId).map((e) => e.id));
          return entries.some((e) => e.id === outcome.outboxId);
        });
        expect(removed).to.equal(true);
        expect((await store.outbox.listStale(new Date(Date.now() + 60_000), 100_000)).some((e) => e.id === outcome.outboxId)).to.equal(false);
      });

      it('gives the relay turn to one holder at a time: another asks, is refused at once, and gets it once the turn ends', async function () {
        let entered = () => undefined as void;
        const inside = new Promise<void>((resolve) => (entered = resolve));
        let release = () => undefined as void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const first = store.outbox.duringRelayTurn(async () => {
          entered();
          await held;
          return 'first';
        });
        await inside;
        let ranSecond = false;
        const second = await store.outbox.duringRelayTurn(async () => {
          ranSecond = true;
          return 'second';
        });
        expect({ second, ranSecond }).to.deep.equal({ second: undefined, ranSecond: false });
        release();
        expect(await first).to.equal('first');
        expect(await store.outbox.duringRelayTurn(async () => 'third')).to.equal('third');
      });
    }

    it('seals a room for good and refuses appends to it, but still answers an exact retry', async function () {
      const earlier = newMessage();
      const first = await store.messages.append(scope, earlier, appendOptions());
      const sealedAt = new Date('2026-02-01T00:00:00Z');
      const sealed = await store.rooms.seal(scope, sealedAt);
      expect(sealed?.state).to.equal('sealed');
      expect(sealed?.sealedAt?.toISOString()).to.equal(sealedAt.toISOString());
      const later = await store.rooms.seal(scope, new Date());
      expect(later?.sealedAt?.toISOString()).to.equal(sealedAt.toISOString());
      expect((await store.messages.append(scope, newMessage(), appendOptions())).kind).to.equal('sealed');
      const retry = await store.messages.append(scope, { ...earlier, requestId: ulid() }, appendOptions());
      expect(retry.kind).to.equal('replayed');
      if (first.kind === 'created' && retry.kind === 'replayed') expect(retry.message.messageId).to.equal(first.message.messageId);
    });

    it('materializes a branch room once under concurrency', async function () {
      const branchScope = { repositoryId: scope.repositoryId, branchId: ulid() };
      const rows = await Promise.all(Array.from({ length: 5 }, () => store.rooms.materialize(branchScope, { roomId: ulid(), now: new Date() })));
      expect(new Set(rows.map((r) => r.roomId)).size).to.equal(1);
      expect(rows[0]?.kind).to.equal('branch');
      expect(await store.rooms.findById(rows[0]!.roomId)).to.deep.equal(rows[0]);
    });

    it('stores bodies byte for byte, NUL and line separators included', async function () {
      const body = 'a\u0000b\r\nc\u2028d é 😀\rdata: x';
      const outcome = await store.messages.append(scope, newMessage({ bodyMarkdown: body, bodyBytes: Buffer.byteLength(body) }), appendOptions());
      if (outcome.kind !== 'created') throw new Error('expected created');
      const [read] = await store.messages.listAfter(outcome.message.roomId, 0, 1);
      expect(read?.bodyMarkdown).to.equal(body);
    });

    it('answers a created append and its replays with the message as stored, every column of it', async function () {
      const branchScope = { repositoryId: scope.repositoryId, branchId: ulid() };
      const body = 'a\u0000b\r\nc\u2028d é 😀 @bot';
      const message = newMessage({
        senderKind: 'bot',
        senderId: 'b_helper',
        bodyMarkdown: body,
        bodyBytes: Buffer.byteLength(body),
        renderedHtml: '<p>a b</p>\n',
        mentions: [{ principalKind: 'bot', principalId: 'b_other', startByte: 20, endByte: 24 }],
        authorizingSubjectKind: 'organization',
        authorizingSubjectId: 'o_acme',
        botCredentialId: ulid(),
        botGrantId: ulid(),
      });
      const created = await store.messages.append(branchScope, message, appendOptions(new Date('2026-03-04T05:06:07.089Z')));
      if (created.kind !== 'created') throw new Error('expected created');
      const [stored] = await store.messages.listAfter(created.message.roomId, 0, 1);
      expect(created.message).to.deep.equal(stored);
      const [replayAlone, ...replaysTogether] = await Promise.all([
        store.messages.append(branchScope, { ...message, requestId: ulid() }, appendOptions()),
        store.messages.append(branchScope, { ...message, requestId: ulid() }, appendOptions()),
        store.messages.append(branchScope, { ...message, requestId: ulid() }, appendOptions()),
      ]);
      for (const replay of [replayAlone!, ...replaysTogether]) expect(replay).to.deep.equal({ kind: 'replayed', message: stored });
    });

    /** Appends `message` as an API process of an earlier release does, through its append function. */
    const appendThrough = async <R>(fn: `chat_append_messages_v${1 | 2 | 3}`, message: NewMessage, extra: Record<string, unknown> = {}): Promise<R> => {
      const item = {
        ord: 0,
        scope_key: roomScopeKey(scope),
        now_ms: Date.now(),
        fresh_id: newUlid(),
        repository_id: scope.repositoryId,
        branch_id: scope.branchId,
        sender_kind: message.senderKind,
        sender_id: message.senderId,
        request_id: message.requestId,
        idempotency_key: message.idempotencyKey,
        body_base64: Buffer.from(message.bodyMarkdown).toString('base64'),
        body_bytes: message.bodyBytes,
        rendered_html: message.renderedHtml,
        mentions: message.mentions,
        authorization_decision_id: message.authorizationDecisionId,
        authorizing_subject_id: message.authorizingSubjectId,
        authorizing_subject_kind: message.authorizingSubjectKind,
        bot_credential_id: message.botCredentialId,
        bot_grant_id: message.botGrantId,
        ...extra,
      };
      const [row] = await store.database.sql.query<R>({ text: `SELECT * FROM ${fn}($1::json)` }, [JSON.stringify([item])]);
      return row!;
    };

    it('appends beside a process of an earlier release, which calls chat_append_messages_v1', async function () {
      type V1Row = { outcome: string; outbox_id: unknown; seq: string | number; message_id: string; body_markdown: Uint8Array | null; created_at: Date | string };
      const first = newMessage();
      const second = newMessage();
      const fromThis = await store.messages.append(scope, first, appendOptions());
      const fromOld = await appendThrough<V1Row>('chat_append_messages_v1', second);
      const third = await store.messages.append(scope, newMessage(), appendOptions());
      expect([fromOld.outcome, Number(fromOld.seq), fromOld.body_markdown]).to.deep.equal(['created', 2, null]);
      expect(third.kind === 'created' && third.message.seq).to.equal(3);
      const replayHere = await store.messages.append(scope, second, appendOptions());
      expect(replayHere.kind === 'replayed' && replayHere.message.messageId).to.equal(fromOld.message_id);
      expect(replayHere.kind === 'replayed' && replayHere.message.createdAt.getTime()).to.equal(new Date(fromOld.created_at).getTime());
      const replayThere = await appendThrough<V1Row>('chat_append_messages_v1', first);
      expect(replayThere).to.include({ outcome: 'replayed', outbox_id: null });
      if (fromThis.kind !== 'created') throw new Error('expected created');
      expect(replayThere.message_id).to.equal(fromThis.message.messageId);
      expect(Buffer.from(replayThere.body_markdown!).toString()).to.equal(first.bodyMarkdown);
      expect(new Date(replayThere.created_at).getTime()).to.equal(fromThis.message.createdAt.getTime());
    });

    it('appends beside a process of an earlier release, which calls chat_append_messages_v2', async function () {
      type V2Row = { outcome: string; seq: string | number; message_id: string; stored_message: { message_id: string; body_base64: string } | null };
      const first = newMessage();
      const fromThis = await store.messages.append(scope, first, appendOptions());
      const fromOld = await appendThrough<V2Row>('chat_append_messages_v2', newMessage());
      expect([fromOld.outcome, Number(fromOld.seq), fromOld.stored_message]).to.deep.equal(['created', 2, null]);
      const replayThere = await appendThrough<V2Row>('chat_append_messages_v2', first);
      expect(replayThere.outcome).to.equal('replayed');
      expect(fromThis.kind === 'created' && fromThis.message.messageId).to.equal(replayThere.stored_message!.message_id);
      expect(replayThere.stored_message!.body_base64).to.equal(Buffer.from(first.bodyMarkdown).toString('base64'));
    });

    it('appends beside a process of an earlier release, which calls chat_append_messages_v3 with its own rate budgets', async function () {
      type V3Row = { outcome: string; seq: string | number | null; stored_message: { message_id: string } | null };
      const senderId = `u_v3_${ulid()}`;
      const budget = { rate_sender_kind: 'user', rate_sender_id: senderId, rate_room_key: '*', rate_window_start_ms: 0, rate_limit: 1 };
      await store.messages.append(scope, newMessage(), appendOptions());
      const first = newMessage({ senderId });
      const created = await appendThrough<V3Row>('chat_append_messages_v3', first, budget);
      expect([created.outcome, Number(created.seq)]).to.deep.equal(['created', 2]);
      expect((await appendThrough<V3Row>('chat_append_messages_v3', newMessage({ senderId }), budget)).outcome).to.equal('rate_limited');
      const replay = await appendThrough<V3Row>('chat_append_messages_v3', first, budget);
      expect(replay.outcome).to.equal('replayed');
      const here = await store.messages.append(scope, first, appendOptions());
      expect(here.kind === 'replayed' && here.message.messageId).to.equal(replay.stored_message!.message_id);
    });

    it('keeps one service key across instances', async function () {
      const name = `test-${ulid()}`;
      const [a, b] = await Promise.all([store.serviceKeys.getOrCreate(name, () => 'a'), store.serviceKeys.getOrCreate(name, () => 'b')]);
      expect(a).to.equal(b);
    });
  });
}

describe('message IDs made by the append statement', function () {
  for (const target of testTargets) {
    it(`on ${target.name}: time parts and increments agree with the ULID rule in JS`, async function () {
      const { database, cleanup } = await target.open();
      try {
        await migrate(database);
        const ulidTime = async (ms: number) => (await database.sql.query<{ v: string }>({ name: 'chat_test_ulid_time', text: 'SELECT chat_ulid_time($1::bigint) AS v' }, [ms]))[0]!.v;
        const increment = async (id: string) =>
          (await database.sql.query<{ v: string | null }>({ name: 'chat_test_ulid_increment', text: 'SELECT chat_ulid_increment($1) AS v' }, [id]))[0]!.v;
        for (const ms of [0, 1, 1_700_000_000_123, 2 ** 48 - 1]) {
          expect(await ulidTime(ms)).to.equal(newUlid(ms).slice(0, 10));
        }
        expect(await increment('01ARZ3NDEKTSV4RRFFQ69G5FAV')).to.equal('01ARZ3NDEKTSV4RRFFQ69G5FAW');
        expect(await increment('01ARZ3NDEKTSV4RRFFQ69G5FZZ')).to.equal('01ARZ3NDEKTSV4RRFFQ69G5G00');
        expect(await increment('01ARZ3NDEKZZZZZZZZZZZZZZZZ')).to.equal(null);
        const previous = { timeMs: 1_700_000_000_123, id: `${newUlid(1_700_000_000_123).slice(0, 10)}0000000000000000` };
        expect(await increment(previous.id)).to.equal(nextMessageId(previous.timeMs, previous).id);

        // A room whose last ID used up its millisecond: the next message moves to the next one.
        const store = createStore(database);
        const roomScope = { repositoryId: ulid(), branchId: null };
        const at = new Date('2026-03-01T00:00:00.500Z');
        const full = `${newUlid(at.getTime()).slice(0, 10)}ZZZZZZZZZZZZZZZZ`;
        await store.rooms.materialize(roomScope, { roomId: ulid(), now: at });
        await database.sql.query({ name: 'chat_test_fill_room', text: 'UPDATE rooms SET last_message_at = $2, last_message_id = $3 WHERE scope_key = $1' }, [
          `repo:${roomScope.repositoryId}`,
          at.toISOString(),
          full,
        ]);
        const outcome = await store.messages.append(roomScope, newMessage(), { newRoomId: ulid(), now: at });
        if (outcome.kind !== 'created') throw new Error('expected created');
        expect(outcome.message.createdAt.getTime()).to.equal(at.getTime() + 1);
        expect(outcome.message.messageId.slice(0, 10)).to.equal(newUlid(at.getTime() + 1).slice(0, 10));
        expect(outcome.message.messageId > full).to.equal(true);
      } finally {
        await cleanup();
      }
    });
  }
});
