import { expect } from 'chai';
import { ChatApiError, ChatClient, type MessageResponse, type RoomRef, type SearchResult } from '@chat/client';
import { ulid } from 'ulid';
import { sharedStack, type Stack } from '../harness/stacks.ts';
import { FetchRecorder } from './sdk-fetch-recorder.ts';

/** Newest first by (createdAt, messageId), as `order=newest` sorts. */
const newestFirst = (a: MessageResponse, b: MessageResponse) =>
  b.createdAt.localeCompare(a.createdAt) || b.messageId.localeCompare(a.messageId);

/** A word no other test's message holds, so a scenario's search sees only its own messages. */
const freshMarker = () => `marker_${ulid().toLowerCase()}`;

describe('clients: the SDK searches a repository and its rooms (search extension)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let recorder: FetchRecorder;

  before(async () => {
    stack = await sharedStack('embedded');
  });
  beforeEach(() => {
    recorder = new FetchRecorder();
  });
  afterEach(() => {
    expect(recorder.violations, 'every answer the SDK saw complies with the OpenAPI document').to.deep.equal([]);
  });

  const client = (token: string) => new ChatClient({ baseUrl: stack.chat.url, token, fetch: recorder.fetch });
  const searchCalls = () => recorder.calls.filter((c) => c.path.split('?')[0]!.endsWith('/search'));
  const ids = (items: SearchResult[]) => items.map((i) => i.message.messageId);

  async function rejection(promise: Promise<unknown>): Promise<ChatApiError> {
    const error = await promise.then(
      () => expect.fail('the search must be refused'),
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ChatApiError);
    return error as ChatApiError;
  }

  it('searchPage finds messages of the whole repository or of one room, each with its room, a highlight and a cursor that opens the room at it', async () => {
    const { scenario, actors } = await stack.scenario();
    const { repositoryId, branchId } = scenario;
    const writer = client(await actors.writer());
    const marker = freshMarker();
    const inRepositoryRoom = (await writer.appendMessage({ repositoryId }, { bodyMarkdown: `${marker} in \`parseConfig\`` })).message;
    const inBranchRoom = (await writer.appendMessage({ repositoryId, branchId }, { bodyMarkdown: `see ${marker} on the branch` })).message;
    await writer.appendMessage({ repositoryId, branchId }, { bodyMarkdown: 'nothing to find here' });
    const reader = client(await actors.reader());

    const whole = await reader.searchPage({ repositoryId }, { q: marker, order: 'newest' });
    expect(ids(whole.items)).to.deep.equal([inBranchRoom.messageId, inRepositoryRoom.messageId]);
    expect(whole.nextCursor ?? null).to.equal(null);
    const [branchHit, repositoryHit] = whole.items;
    expect(branchHit!.branchId).to.equal(branchId);
    expect(repositoryHit!.branchId ?? null).to.equal(null);
    expect(branchHit!.highlights[0]!.filter((run) => run.match).map((run) => run.text)).to.deep.equal([marker]);

    const repositoryRoom = await reader.searchPage({ room: { repositoryId } }, { q: marker });
    expect(ids(repositoryRoom.items)).to.deep.equal([inRepositoryRoom.messageId]);
    const branchRoom: RoomRef = { repositoryId, branchId };
    const inBranch = await reader.searchPage({ room: branchRoom }, { q: `${marker} branch` });
    expect(ids(inBranch.items)).to.deep.equal([inBranchRoom.messageId]);
    expect(searchCalls().map((c) => c.path.split('?')[0])).to.deep.equal([
      `/v1/repositories/${repositoryId}/search`,
      `/v1/repositories/${repositoryId}/room/search`,
      `/v1/repositories/${repositoryId}/branches/${branchId}/room/search`,
    ]);

    // The result's cursor is the message's cursor in its room: the history read opens there.
    const opened = await reader.listMessageHistory(branchRoom, { at: inBranch.items[0]!.cursor, limit: 1 });
    expect(opened.items.map((m) => m.messageId)).to.deep.equal([inBranchRoom.messageId]);
  });

  it('search walks every page newest first, one request per page as the loop asks, with no repeats and no gaps', async () => {
    const { scenario, actors } = await stack.scenario();
    const { repositoryId, branchId } = scenario;
    const writer = client(await actors.writer());
    const marker = freshMarker();
    const appended: MessageResponse[] = [];
    for (let i = 0; i < 11; i++) {
      const room = i % 3 === 0 ? { repositoryId } : { repositoryId, branchId };
      appended.push((await writer.appendMessage(room, { bodyMarkdown: `${marker} number ${i}` })).message);
    }
    const reader = client(await actors.reader());

    const pages: SearchResult[][] = [];
    for await (const page of reader.search({ repositoryId }, { q: marker, order: 'newest', limit: 4 })) pages.push(page.items);
    expect(pages.map((p) => p.length)).to.deep.equal([4, 4, 3]);
    expect(pages.flatMap(ids)).to.deep.equal([...appended].sort(newestFirst).map((m) => m.messageId));
    expect(searchCalls()).to.have.length(3);
    // Every page after the first is asked with the previous page's cursor and the same query.
    for (const call of searchCalls().slice(1)) expect(new URL(call.path, 'http://x').searchParams.get('cursor')).to.be.a('string');

    // Breaking out after the first page costs one request, not the whole search.
    const before = searchCalls().length;
    for await (const page of reader.search({ repositoryId }, { q: marker, order: 'newest', limit: 4 })) {
      expect(page.items).to.have.length(4);
      break;
    }
    expect(searchCalls().length - before).to.equal(1);
  });

  it('filters narrow a search: from: a sender, in: one branch room', async () => {
    const { scenario, actors } = await stack.scenario();
    const { repositoryId, branchId } = scenario;
    const marker = freshMarker();
    const byWriter = (await client(await actors.writer()).appendMessage({ repositoryId, branchId }, { bodyMarkdown: `${marker} by a person` })).message;
    const byBot = (await client(await actors.appendBot()).appendMessage({ repositoryId }, { bodyMarkdown: `${marker} by a bot` })).message;
    const reader = client(await actors.reader());

    const fromBot = await reader.searchPage({ repositoryId }, { q: `${marker} from:${scenario.bots.appender.id}` });
    expect(ids(fromBot.items)).to.deep.equal([byBot.messageId]);
    const inBranch = await reader.searchPage({ repositoryId }, { q: `${marker} in:${branchId}` });
    expect(ids(inBranch.items)).to.deep.equal([byWriter.messageId]);
  });

  it('a query the service cannot read is a ChatApiError with its code, and an outsider is denied as every read is', async () => {
    const { scenario, actors } = await stack.scenario();
    const { repositoryId, branchId } = scenario;
    const reader = client(await actors.reader());

    const empty = await rejection(reader.searchPage({ repositoryId }, { q: '' }));
    expect(empty).to.include({ status: 400, code: 'REQUEST_INVALID', attempts: 1 });
    const inOnOneRoom = await rejection(reader.searchPage({ room: { repositoryId } }, { q: 'words in:repository' }));
    expect(inOnOneRoom).to.include({ status: 400, code: 'REQUEST_INVALID' });
    const forged = await rejection(reader.searchPage({ repositoryId }, { q: 'words', cursor: 'forged' }));
    expect(forged).to.include({ status: 400, code: 'CURSOR_INVALID' });

    const outsider = client(await actors.outsider());
    for (const scope of [{ repositoryId }, { room: { repositoryId } }, { room: { repositoryId, branchId } }]) {
      const denied = await rejection(outsider.searchPage(scope, { q: 'anything' }));
      expect(denied).to.include({ status: 403, code: 'AUTHORIZATION_DENIED', attempts: 1 });
    }
    // The iterator surfaces the same error from its first page.
    const iterated = await rejection((async () => {
      for await (const page of outsider.search({ repositoryId }, { q: 'anything' })) void page;
    })());
    expect(iterated.code).to.equal('AUTHORIZATION_DENIED');
  });
});
