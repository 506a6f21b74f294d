import { expect } from 'chai';
import type { MessagePageResponse, MessageResponse, RoomResponse } from '@chat/contracts';
import { expectError, expectStatus, compareMessages } from '../harness/assertions.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

/** Appends `count` messages one after another and returns them in append order. */
async function appendMany(stack: Stack, scope: { repositoryId: string; branchId?: string }, token: string, count: number, label = 'm') {
  const messages: MessageResponse[] = [];
  for (let i = 0; i < count; i++) {
    const res = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: `${label} ${i}` });
    expectStatus(res, 201);
    messages.push(res.body);
  }
  return messages;
}

for (const mode of MODES) {
  describe(`[${mode}] section 4 room metadata and list messages`, function () {
    this.timeout(120_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it('section 4 room metadata rule 1: a room that does not exist yet is an empty virtual room (persisted false)', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.reader();
      const repo = await stack.api.getRoom<RoomResponse>({ repositoryId: scenario.repositoryId }, token);
      expectStatus(repo, 200);
      expect(repo.body).to.include({ repositoryId: scenario.repositoryId, kind: 'repository', state: 'active', persisted: false, messageCount: 0 });
      const branch = await stack.api.getRoom<RoomResponse>({ repositoryId: scenario.repositoryId, branchId: scenario.branchId }, token);
      expectStatus(branch, 200);
      expect(branch.body).to.include({ repositoryId: scenario.repositoryId, branchId: scenario.branchId, kind: 'branch', persisted: false, messageCount: 0 });
      const emptyList = await stack.api.list<MessagePageResponse>({ repositoryId: scenario.repositoryId }, token);
      expectStatus(emptyList, 200);
      expect(emptyList.body).to.deep.equal({ items: [], nextCursor: null });
    });

    it('section 4 room metadata rule 1: the first append makes the room persisted; metadata follows its messages', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const [first, second] = await appendMany(stack, scope, await actors.writer(), 2);
      const room = await stack.api.getRoom<RoomResponse>(scope, await actors.reader());
      expectStatus(room, 200);
      expect(room.body).to.include({ persisted: true, messageCount: 2, state: 'active', kind: 'branch', roomId: first!.roomId, branchId: scenario.branchId });
      expect(second!.roomId).to.equal(first!.roomId);
      expect(Date.parse(room.body.lastMessageAt!)).to.equal(Date.parse(second!.createdAt));
      // The repository room is a different room and stays virtual.
      const repo = await stack.api.getRoom<RoomResponse>({ repositoryId: scenario.repositoryId }, await actors.reader());
      expect(repo.body).to.include({ persisted: false, messageCount: 0 });
    });

    it('section 3 / room metadata: a virtual room whose scope is sealed (archived repository, deleted branch) reads as sealed', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      const archived = await stack.api.getRoom<RoomResponse>({ repositoryId: scenario.archivedRepositoryId }, token);
      expectStatus(archived, 200);
      expect(archived.body).to.include({ state: 'sealed', persisted: false });
      const deleted = await stack.api.getRoom<RoomResponse>({ repositoryId: scenario.repositoryId, branchId: scenario.deletedBranchId }, token);
      expectStatus(deleted, 200);
      expect(deleted.body).to.include({ state: 'sealed', persisted: false });
    });

    it('section 4 list rule 1: items are oldest first by (createdAt, messageId), across senders', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const appended: MessageResponse[] = [];
      for (let i = 0; i < 6; i++) {
        const token = i % 2 === 0 ? await actors.writer() : await actors.appendBot();
        const res = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: `turn ${i}` });
        expectStatus(res, 201);
        appended.push(res.body);
      }
      const page = await stack.api.list<MessagePageResponse>(scope, await actors.readBot());
      expectStatus(page, 200);
      const ids = page.body.items.map((m) => m.messageId);
      expect(ids).to.deep.equal(appended.map((m) => m.messageId));
      expect([...page.body.items].sort(compareMessages).map((m) => m.messageId)).to.deep.equal(ids);
      expect(page.body.nextCursor).to.equal(null);
    });

    it('section 4 list rule 2: following nextCursor walks every message once, and nextCursor is null at the end', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const appended = await appendMany(stack, scope, await actors.writer(), 7);
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page = await stack.api.list<MessagePageResponse>(scope, await actors.reader(), query);
        expectStatus(page, 200);
        sizes.push(page.body.items.length);
        seen.push(...page.body.items.map((m) => m.messageId));
        cursor = page.body.nextCursor ?? null;
      } while (cursor !== null && sizes.length < 10);
      expect(sizes).to.deep.equal([3, 3, 1]);
      expect(seen).to.deep.equal(appended.map((m) => m.messageId));
    });

    it('section 4 list rule 2: a cursor from the last page keeps working after newer messages arrive', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      await appendMany(stack, scope, await actors.writer(), 2, 'old');
      const first = await stack.api.list<MessagePageResponse>(scope, await actors.reader(), 'limit=2');
      expect(first.body.items).to.have.length(2);
      // Exactly `limit` items and no more: the service says so with a null cursor.
      expect(first.body.nextCursor).to.equal(null);
      const onePage = await stack.api.list<MessagePageResponse>(scope, await actors.reader(), 'limit=1');
      const cursor = onePage.body.nextCursor!;
      expect(cursor).to.be.a('string');
      const [late] = await appendMany(stack, scope, await actors.writer(), 1, 'new');
      const rest = await stack.api.list<MessagePageResponse>(scope, await actors.reader(), `cursor=${encodeURIComponent(cursor)}`);
      expectStatus(rest, 200);
      expect(rest.body.items.map((m) => m.bodyMarkdown)).to.deep.equal(['old 1', 'new 0']);
      expect(rest.body.items[1]!.messageId).to.equal(late!.messageId);
    });

    it('section 4 list rule 3: a cursor is valid only in the room that produced it (CURSOR_INVALID elsewhere)', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      const repoRoom = { repositoryId: scenario.repositoryId };
      const branchRoom = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const otherRoom = { repositoryId: scenario.otherRepositoryId };
      for (const scope of [repoRoom, branchRoom, otherRoom]) await appendMany(stack, scope, token, 2);
      const page = await stack.api.list<MessagePageResponse>(repoRoom, token, 'limit=1');
      const cursor = encodeURIComponent(page.body.nextCursor!);
      expectStatus(await stack.api.list(repoRoom, token, `cursor=${cursor}`), 200);
      expectError(await stack.api.list(branchRoom, token, `cursor=${cursor}`), 400, 'CURSOR_INVALID');
      expectError(await stack.api.list(otherRoom, token, `cursor=${cursor}`), 400, 'CURSOR_INVALID');
      // A room that does not exist yet produced no cursor either.
      expectError(await stack.api.list({ repositoryId: scenario.repositoryId, branchId: scenario.deletedBranchId }, token, `cursor=${cursor}`), 400, 'CURSOR_INVALID');
    });

    it('section 4 list rule 3: forged, edited, truncated and empty cursors give CURSOR_INVALID', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      const scope = { repositoryId: scenario.repositoryId };
      await appendMany(stack, scope, token, 3);
      const cursor = (await stack.api.list<MessagePageResponse>(scope, token, 'limit=1')).body.nextCursor!;
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const bad = [flip(cursor, 0), flip(cursor, cursor.length - 1), flip(cursor, Math.floor(cursor.length / 2)), cursor.slice(0, -1), cursor + 'A', cursor + '=', 'x', 'eyJzZXEiOjF9'];
      for (const value of bad) {
        expectError(await stack.api.list(scope, token, `cursor=${encodeURIComponent(value)}`), 400, 'CURSOR_INVALID');
      }
      expectError(await stack.api.list(scope, token, 'cursor='), 400, 'CURSOR_INVALID');
    });

    it('section 8 limit: 0, 201, -1, 1.5, abc, empty and a repeated limit give 400 LIMIT_INVALID', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.reader();
      for (const scope of [{ repositoryId: scenario.repositoryId }, { repositoryId: scenario.repositoryId, branchId: scenario.branchId }]) {
        for (const query of ['limit=0', 'limit=201', 'limit=-1', 'limit=1.5', 'limit=abc', 'limit=', 'limit=1&limit=2', 'limit=%201', 'limit=1e2', 'limit=0x10']) {
          expectError(await stack.api.list(scope, token, query), 400, 'LIMIT_INVALID');
        }
      }
    });

    it('section 8 limit: the default page is 50 items and the maximum 200', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      const scope = { repositoryId: scenario.repositoryId };
      // 201 messages, sent 20 at a time.
      for (let batch = 0; batch < 201; batch += 20) {
        const size = Math.min(20, 201 - batch);
        const results = await Promise.all(Array.from({ length: size }, (_, i) => stack.api.append(scope, token, { bodyMarkdown: `n ${batch + i}` })));
        for (const r of results) expectStatus(r, 201);
      }
      const byDefault = await stack.api.list<MessagePageResponse>(scope, token);
      expect(byDefault.body.items).to.have.length(50);
      expect(byDefault.body.nextCursor).to.be.a('string');
      const max = await stack.api.list<MessagePageResponse>(scope, token, 'limit=200');
      expect(max.body.items).to.have.length(200);
      expect(max.body.items.slice(0, 50).map((m) => m.messageId)).to.deep.equal(byDefault.body.items.map((m) => m.messageId));
      const last = await stack.api.list<MessagePageResponse>(scope, token, `limit=200&cursor=${encodeURIComponent(max.body.nextCursor!)}`);
      expect(last.body.items).to.have.length(1);
      expect(last.body.nextCursor).to.equal(null);
      const one = await stack.api.list<MessagePageResponse>(scope, token, 'limit=1');
      expect(one.body.items).to.have.length(1);
      const all = [...max.body.items, ...last.body.items];
      expect(new Set(all.map((m) => m.messageId)).size).to.equal(201);
      expect([...all].sort(compareMessages).map((m) => m.messageId)).to.deep.equal(all.map((m) => m.messageId));
    });
  });
}
