import { expect } from 'chai';
import { ChatApiError, ChatClient, type MessageResponse } from '@chat/client';
import { sharedStack, type Stack } from '../harness/stacks.ts';
import { FetchRecorder } from './sdk-fetch-recorder.ts';

describe('clients: the SDK reads a room from its newest message (history extension)', function () {
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

  async function seed(writer: ChatClient, room: { repositoryId: string; branchId?: string }, count: number): Promise<MessageResponse[]> {
    const out: MessageResponse[] = [];
    for (let i = 0; i < count; i++) out.push((await writer.appendMessage(room, { bodyMarkdown: `h ${i}` })).message);
    return out;
  }

  it('roomMessagesBackward yields newest first, one page per request as the loop asks, down to the first message', async () => {
    const { scenario, actors } = await stack.scenario();
    const room = { repositoryId: scenario.repositoryId, branchId: scenario.branchId };
    const appended = await seed(client(await actors.writer()), room, 11);
    const reader = client(await actors.reader());

    const seen: string[] = [];
    for await (const message of reader.roomMessagesBackward({ ...room, pageSize: 4 })) seen.push(message.bodyMarkdown);
    expect(seen).to.deep.equal(appended.map((m) => m.bodyMarkdown).reverse());
    const historyCalls = () => recorder.calls.filter((c) => c.path.split('?')[0]!.endsWith('/room/history'));
    expect(historyCalls()).to.have.length(3);

    // Breaking out after the newest few costs one request, not the room.
    const before = historyCalls().length;
    const newest: string[] = [];
    for await (const message of reader.roomMessagesBackward({ ...room, pageSize: 4 })) {
      newest.push(message.bodyMarkdown);
      if (newest.length === 2) break;
    }
    expect(newest).to.deep.equal(['h 10', 'h 9']);
    expect(historyCalls().length - before).to.equal(1);
  });

  it('listMessageHistory gives each message its cursor, usable before, after and at it, and as the stream resume point', async () => {
    const { scenario, actors } = await stack.scenario();
    const room = { repositoryId: scenario.repositoryId };
    await seed(client(await actors.writer()), room, 6);
    const reader = client(await actors.reader());
    const newest = await reader.listMessageHistory(room, { limit: 3 });
    expect(newest.items.map((m) => m.bodyMarkdown)).to.deep.equal(['h 3', 'h 4', 'h 5']);
    expect(newest.newerCursor).to.equal(null);
    const older = await reader.listMessageHistory(room, { before: newest.olderCursor, limit: 2 });
    expect(older.items.map((m) => m.bodyMarkdown)).to.deep.equal(['h 1', 'h 2']);
    const at = await reader.listMessageHistory(room, { at: older.cursors[1], limit: 2 });
    expect(at.items.map((m) => m.bodyMarkdown)).to.deep.equal(['h 2', 'h 3']);
    const after = await reader.listMessageHistory(room, { after: at.cursors[1] });
    expect(after.items.map((m) => m.bodyMarkdown)).to.deep.equal(['h 4', 'h 5']);
    // The spec's list walks on from a history cursor as well.
    const listed = await reader.listMessages(room, { cursor: newest.cursors[0] });
    expect(listed.items.map((m) => m.bodyMarkdown)).to.deep.equal(['h 4', 'h 5']);

    // The stream started at the newest page's last cursor delivers only what comes after it.
    const stream = reader.streamRoom({ ...room, lastEventId: newest.cursors.at(-1)! });
    const late = (await client(await actors.writer()).appendMessage(room, { bodyMarkdown: 'late' })).message;
    for await (const event of stream) {
      expect(event.data.messageId).to.equal(late.messageId);
      break;
    }
    stream.close();

    await reader.listMessageHistory(room, { before: 'forged' }).then(
      () => expect.fail('a forged cursor must be refused'),
      (error: unknown) => {
        expect(error).to.be.instanceOf(ChatApiError);
        expect((error as ChatApiError).code).to.equal('CURSOR_INVALID');
      },
    );
  });
});
