import { expect } from 'chai';
import type { MessageHistoryPageResponse, MessagePageResponse, MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { roomPath, type ApiResponse, type RoomScope } from '../harness/api-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

/** GET .../room/history (the history extension), validated against the OpenAPI document like every call. */
function history(stack: Stack, scope: RoomScope, token: string, query = ''): Promise<ApiResponse<MessageHistoryPageResponse>> {
  return stack.api.send<MessageHistoryPageResponse>({
    method: 'GET',
    path: `${roomPath(scope)}/history${query ? `?${query}` : ''}`,
    headers: { authorization: `Bearer ${token}` },
  });
}

async function appendMany(stack: Stack, scope: RoomScope, token: string, count: number, label = 'm'): Promise<MessageResponse[]> {
  const messages: MessageResponse[] = [];
  for (let i = 0; i < count; i++) {
    const res = await stack.api.append<MessageResponse>(scope, token, { bodyMarkdown: `${label} ${i}` });
    expectStatus(res, 201);
    messages.push(res.body);
  }
  return messages;
}

const q = encodeURIComponent;
const bodies = (page: { items: MessageResponse[] }) => page.items.map((m) => m.bodyMarkdown);

/** An error answer without its request ID, to compare answers for equality. */
function shape(res: ApiResponse) {
  const body = res.body as { error: { code: string; message: string } };
  return JSON.stringify({ status: res.status, code: body.error.code, message: body.error.message });
}

for (const mode of MODES) {
  describe(`[${mode}] extension: message history (newest first pages, reads before, after and at a message)`, function () {
    this.timeout(180_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it('without a cursor: the newest `limit` messages, oldest first, each with its cursor; nothing newer', async () => {
      const { scenario, actors } = await stack.scenario();
      for (const scope of [{ repositoryId: scenario.repositoryId }, { repositoryId: scenario.repositoryId, branchId: scenario.branchId }]) {
        const appended = await appendMany(stack, scope, await actors.writer(), 7);
        const page = await history(stack, scope, await actors.reader(), 'limit=3');
        expectStatus(page, 200);
        expect(page.body.items.map((m) => m.messageId)).to.deep.equal(appended.slice(4).map((m) => m.messageId));
        expect(page.body.cursors).to.have.length(3);
        expect(new Set(page.body.cursors).size).to.equal(3);
        expect(page.body.olderCursor).to.equal(page.body.cursors[0]);
        expect(page.body.newerCursor).to.equal(null);
        // The whole room fits: nothing older either.
        const all = await history(stack, scope, await actors.readBot());
        expect(all.body.items.map((m) => m.messageId)).to.deep.equal(appended.map((m) => m.messageId));
        expect(all.body).to.include({ olderCursor: null, newerCursor: null });
      }
    });

    it('before: following olderCursor walks back to the first message, every message once, olderCursor null at the end', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const appended = await appendMany(stack, scope, await actors.writer(), 8);
      const token = await actors.reader();
      const pages: string[][] = [];
      let page = (await history(stack, scope, token, 'limit=3')).body;
      pages.push(bodies(page));
      while (page.olderCursor && pages.length < 10) {
        const res = await history(stack, scope, token, `limit=3&before=${q(page.olderCursor)}`);
        expectStatus(res, 200);
        page = res.body;
        // Reading back from a message, that message and everything after it are newer.
        expect(page.newerCursor).to.equal(page.cursors.at(-1));
        pages.push(bodies(page));
      }
      expect(pages).to.deep.equal([['m 5', 'm 6', 'm 7'], ['m 2', 'm 3', 'm 4'], ['m 0', 'm 1']]);
      expect(page.olderCursor).to.equal(null);
      expect(pages.reverse().flat()).to.deep.equal(appended.map((m) => m.bodyMarkdown));
      // Before the first message there is nothing.
      const first = (await history(stack, scope, token, 'limit=1&at=' + q(page.cursors[0]!))).body;
      expect(bodies(first)).to.deep.equal(['m 0']);
      const none = await history(stack, scope, token, `before=${q(first.cursors[0]!)}`);
      expect(none.body).to.deep.equal({ items: [], cursors: [], olderCursor: null, newerCursor: null });
    });

    it('one cursor per message, shared with the list and the stream: after continues after it, at starts at it, before ends before it', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      await appendMany(stack, scope, await actors.writer(), 6);
      const token = await actors.reader();
      const all = (await history(stack, scope, token)).body;
      const third = all.cursors[2]!;
      expect(bodies((await history(stack, scope, token, `limit=2&after=${q(third)}`)).body)).to.deep.equal(['m 3', 'm 4']);
      const at = (await history(stack, scope, token, `limit=2&at=${q(third)}`)).body;
      expect(bodies(at)).to.deep.equal(['m 2', 'm 3']);
      expect(at.cursors).to.deep.equal(all.cursors.slice(2, 4));
      expect(at).to.include({ olderCursor: all.cursors[2], newerCursor: all.cursors[3] });
      expect(bodies((await history(stack, scope, token, `limit=2&before=${q(third)}`)).body)).to.deep.equal(['m 0', 'm 1']);
      // The contract's list takes the same cursor as "after it", and its nextCursor works here.
      const listed = await stack.api.list<MessagePageResponse>(scope, token, `limit=2&cursor=${q(third)}`);
      expect(bodies(listed.body)).to.deep.equal(['m 3', 'm 4']);
      expect(bodies((await history(stack, scope, token, `before=${q(listed.body.nextCursor!)}`)).body)).to.deep.equal(['m 0', 'm 1', 'm 2', 'm 3']);
      // At the end, after the newest message: an empty page; the stream takes over from there.
      const end = await history(stack, scope, token, `after=${q(all.cursors.at(-1)!)}`);
      expect(end.body).to.deep.equal({ items: [], cursors: [], olderCursor: null, newerCursor: null });
    });

    it('leaves the contract\'s list as it is: the extension\'s parameters mean nothing there', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      await appendMany(stack, scope, await actors.writer(), 3);
      const token = await actors.reader();
      const newest = (await history(stack, scope, token)).body;
      const plain = await stack.api.list<MessagePageResponse>(scope, token, 'limit=2');
      for (const query of [`limit=2&before=${q(newest.cursors[2]!)}`, 'limit=2&direction=backward', `limit=2&at=${q(newest.cursors[1]!)}`]) {
        const res = await stack.api.list<MessagePageResponse>(scope, token, query);
        expectStatus(res, 200);
        expect(bodies(res.body)).to.deep.equal(bodies(plain.body));
        expect(bodies(res.body)).to.deep.equal(['m 0', 'm 1']);
      }
    });

    it('limit: the default is 50 and the largest 200; 0, 201, 1.5, abc, empty and repeated values are 400 LIMIT_INVALID', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      const scope = { repositoryId: scenario.repositoryId };
      for (let batch = 0; batch < 201; batch += 20) {
        const size = Math.min(20, 201 - batch);
        const results = await Promise.all(Array.from({ length: size }, () => stack.api.append(scope, token, { bodyMarkdown: 'n' })));
        for (const r of results) expectStatus(r, 201);
      }
      const byDefault = (await history(stack, scope, token)).body;
      expect(byDefault.items).to.have.length(50);
      const max = (await history(stack, scope, token, 'limit=200')).body;
      expect(max.items).to.have.length(200);
      expect(max.items.slice(150).map((m) => m.messageId)).to.deep.equal(byDefault.items.map((m) => m.messageId));
      const rest = (await history(stack, scope, token, `limit=200&before=${q(max.olderCursor!)}`)).body;
      expect(rest.items).to.have.length(1);
      expect(rest.olderCursor).to.equal(null);
      for (const scope2 of [scope, { repositoryId: scenario.repositoryId, branchId: scenario.branchId }]) {
        for (const query of ['limit=0', 'limit=201', 'limit=-1', 'limit=1.5', 'limit=abc', 'limit=', 'limit=1&limit=2', 'limit=1e2']) {
          expectError(await history(stack, scope2, token, query), 400, 'LIMIT_INVALID');
        }
      }
    });

    it('cursors: forged, edited, truncated, empty, repeated, of another room or of a room with no message are 400 CURSOR_INVALID; two anchors are 400 CURSOR_CONFLICT', async () => {
      const { scenario, actors } = await stack.scenario();
      const token = await actors.writer();
      const repoRoom = { repositoryId: scenario.repositoryId };
      const branchRoom = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
      const otherRoom = { repositoryId: scenario.otherRepositoryId };
      for (const scope of [repoRoom, branchRoom, otherRoom]) await appendMany(stack, scope, token, 3);
      const cursor = (await history(stack, repoRoom, token)).body.cursors[1]!;
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const bad = [flip(cursor, 0), flip(cursor, 2), flip(cursor, cursor.length - 1), flip(cursor, 15), cursor.slice(0, -1), cursor + 'A', cursor + '=', 'x', ''];
      for (const anchor of ['before', 'after', 'at']) {
        expectStatus(await history(stack, repoRoom, token, `${anchor}=${q(cursor)}`), 200);
        for (const value of bad) expectError(await history(stack, repoRoom, token, `${anchor}=${q(value)}`), 400, 'CURSOR_INVALID');
        expectError(await history(stack, repoRoom, token, `${anchor}=${q(cursor)}&${anchor}=${q(cursor)}`), 400, 'CURSOR_INVALID');
        for (const scope of [branchRoom, otherRoom]) expectError(await history(stack, scope, token, `${anchor}=${q(cursor)}`), 400, 'CURSOR_INVALID');
        expectError(await history(stack, { repositoryId: scenario.repositoryId, branchId: scenario.deletedBranchId }, token, `${anchor}=${q(cursor)}`), 400, 'CURSOR_INVALID');
      }
      expectError(await history(stack, repoRoom, token, `before=${q(cursor)}&after=${q(cursor)}`), 400, 'CURSOR_CONFLICT');
      expectError(await history(stack, repoRoom, token, `at=${q(cursor)}&before=x`), 400, 'CURSOR_CONFLICT');
      // A room nobody wrote to reads as empty without a cursor.
      const virtual = await history(stack, { repositoryId: scenario.repositoryId, branchId: scenario.deletedBranchId }, token);
      expect(virtual.body).to.deep.equal({ items: [], cursors: [], olderCursor: null, newerCursor: null });
    });

    it('authorization as the list: outsiders, another repository, a foreign or unknown branch get the same 403 whatever exists, before any cursor is looked at', async () => {
      const { scenario, actors } = await stack.scenario();
      const existing = { repositoryId: scenario.repositoryId };
      await appendMany(stack, existing, await actors.writer(), 2);
      const cursor = (await history(stack, existing, await actors.reader())).body.cursors[0]!;
      const rooms = [existing, { repositoryId: scenario.repositoryId, branchId: scenario.branchId }, { repositoryId: ulid() }, { repositoryId: scenario.repositoryId, branchId: ulid() }];
      for (const token of [await actors.outsider(), await actors.mint({ type: 'bot', subjectId: 'b_ci', credentialId: 'c_1' })]) {
        const answers = new Set<string>();
        for (const scope of rooms) {
          for (const query of ['', 'limit=5', `before=${q(cursor)}`, 'before=forged', 'limit=0', `before=${q(cursor)}&after=${q(cursor)}`]) {
            const res = await history(stack, scope, token, query);
            expectError(res, 403, 'AUTHORIZATION_DENIED');
            answers.add(shape(res));
          }
        }
        expect([...answers]).to.have.length(1);
      }
      // The bots' grants are for this repository only, and a branch of another repository is not this repository's.
      expectError(await history(stack, { repositoryId: scenario.otherRepositoryId }, await actors.readBot()), 403, 'AUTHORIZATION_DENIED');
      expectError(await history(stack, { repositoryId: scenario.repositoryId, branchId: scenario.foreignBranchId }, await actors.reader()), 403, 'AUTHORIZATION_DENIED');
      expectError(await history(stack, existing, await actors.revokedBot()), 401, 'TOKEN_REJECTED');
    });

    it('authorization is live: a revoked bot grant and a removed member are refused at once; a sealed room stays readable', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const appended = await appendMany(stack, scope, await actors.writer(), 3);
      const bot = await actors.readBot();
      const member = await actors.reader();
      expectStatus(await history(stack, scope, bot), 200);
      expectStatus(await history(stack, scope, member), 200);
      await stack.fixture.updateBots((bots) => {
        for (const grant of bots.find((b) => b.id === scenario.bots.reader.id)!.grants) grant.state = 'revoked';
      });
      expectError(await history(stack, scope, bot), 403, 'AUTHORIZATION_DENIED');
      await stack.fixture.updateRepository(scenario.repositoryId, (r) => {
        delete r.members[scenario.users.reader];
      });
      expectError(await history(stack, scope, member), 403, 'AUTHORIZATION_DENIED');
      expectError(await stack.api.list(scope, member), 403, 'AUTHORIZATION_DENIED');
      await stack.fixture.updateRepository(scenario.repositoryId, (r) => {
        r.state = 'archived';
      });
      const sealed = await history(stack, scope, await actors.writer(), 'limit=2');
      expectStatus(sealed, 200);
      expect(sealed.body.items.map((m) => m.messageId)).to.deep.equal(appended.slice(1).map((m) => m.messageId));
      expect((await stack.api.getRoom<{ state: string }>(scope, await actors.writer())).body.state).to.equal('sealed');
    });

    it('pages read while messages are appended neither skip nor repeat: back from the newest page, then on from its last cursor', async () => {
      const { scenario, actors } = await stack.scenario();
      const scope = { repositoryId: scenario.repositoryId };
      const writer = await actors.writer();
      const reader = await actors.reader();
      await appendMany(stack, scope, writer, 20, 'early');
      // Three writers append while the reader pages in both directions.
      const writing = Promise.all([0, 1, 2].map((w) => appendMany(stack, scope, writer, 15, `late ${w}`)));
      const newest = (await history(stack, scope, reader, 'limit=7')).body;
      const older: MessageResponse[] = [];
      for (let before = newest.olderCursor; before; ) {
        const page = (await history(stack, scope, reader, `limit=4&before=${q(before)}`)).body;
        older.unshift(...page.items);
        before = page.olderCursor ?? null;
      }
      const newer: MessageResponse[] = [];
      let after = newest.cursors.at(-1)!;
      for (let guard = 0; guard < 100; guard++) {
        const page = (await history(stack, scope, reader, `limit=5&after=${q(after)}`)).body;
        newer.push(...page.items);
        if (page.cursors.length > 0) after = page.cursors.at(-1)!;
        if (!page.newerCursor && (await Promise.race([writing.then(() => true), new Promise((r) => setTimeout(() => r(false), 20))]))) {
          const last = (await history(stack, scope, reader, `limit=200&after=${q(after)}`)).body;
          newer.push(...last.items);
          break;
        }
      }
      await writing;
      const seen = [...older, ...newest.items, ...newer].map((m) => m.messageId);
      const everything: string[] = [];
      for (let cursor: string | null | undefined = undefined; cursor !== null; ) {
        const page: MessagePageResponse = (await stack.api.list<MessagePageResponse>(scope, reader, `limit=200${cursor ? `&cursor=${q(cursor)}` : ''}`)).body;
        everything.push(...page.items.map((m) => m.messageId));
        cursor = page.nextCursor ?? null;
      }
      expect(everything).to.have.length(65);
      expect(seen).to.deep.equal(everything);
    });
  });
}
