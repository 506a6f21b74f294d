import { expect } from 'chai';
import type { MessageHistoryPageResponse, MessageResponse, SearchPageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { roomPath, type ApiResponse } from '../harness/api-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { MODES, sharedStack, type Stack } from '../harness/stacks.ts';

/** GET .../search (the search extension), validated against the OpenAPI document like every call. */
function search(stack: Stack, path: string, token: string, query: string): Promise<ApiResponse<SearchPageResponse>> {
  return stack.api.send<SearchPageResponse>({ method: 'GET', path: `${path}?${query}`, headers: { authorization: `Bearer ${token}` } });
}

const q = encodeURIComponent;

for (const mode of MODES) {
  describe(`[${mode}] extension: search`, function () {
    this.timeout(180_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    it('finds a message right after its append, by a word, an identifier part, a path tail and a commit prefix', async () => {
      const { scenario, actors } = await stack.scenario();
      const marker = `marker_${ulid().toLowerCase()}`;
      const appended = await stack.api.append<MessageResponse>({ repositoryId: scenario.repositoryId, branchId: scenario.branchId }, await actors.writer(), {
        bodyMarkdown: `${marker}: \`retryBudget\` in src/auth/token.ts broke at 3f9a2b7c1d4e5f60718293a4b5c6d7e8f9012345`,
      });
      expectStatus(appended, 201);
      const reader = await actors.reader();
      for (const words of [marker, `${marker} budget`, `${marker} auth/token.ts`, `${marker} 3f9a2b7`, `${marker} has:code`]) {
        const res = await search(stack, `/v1/repositories/${scenario.repositoryId}/search`, reader, `q=${q(words)}`);
        expectStatus(res, 200);
        expect(res.body.items.map((i) => i.message.messageId), words).to.deep.equal([appended.body.messageId]);
      }
      // The result's cursor opens the room's history at the message.
      const found = await search(stack, `${roomPath({ repositoryId: scenario.repositoryId, branchId: scenario.branchId })}/search`, reader, `q=${q(marker)}`);
      expectStatus(found, 200);
      const [item] = found.body.items;
      expect(item!.branchId).to.equal(scenario.branchId);
      expect(item!.highlights[0]!.some((run) => run.match && run.text === marker)).to.equal(true);
      const history = await stack.api.send<MessageHistoryPageResponse>({
        method: 'GET',
        path: `${roomPath({ repositoryId: scenario.repositoryId, branchId: scenario.branchId })}/history?at=${q(item!.cursor)}&limit=1`,
        headers: { authorization: `Bearer ${reader}` },
      });
      expectStatus(history, 200);
      expect(history.body.items[0]!.messageId).to.equal(appended.body.messageId);
    });

    it('denies an outsider as every read does, and refuses a query it cannot read', async () => {
      const { scenario, actors } = await stack.scenario();
      const outsider = await search(stack, `/v1/repositories/${scenario.repositoryId}/search`, await actors.outsider(), 'q=anything');
      expectError(outsider, 403, 'AUTHORIZATION_DENIED');
      const bad = await search(stack, `/v1/repositories/${scenario.repositoryId}/search`, await actors.reader(), `q=${q('"unclosed')}`);
      expectError(bad, 400, 'REQUEST_INVALID');
    });
  });
}
