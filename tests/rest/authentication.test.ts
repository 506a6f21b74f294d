import { expect } from 'chai';
import type { MessageResponse, RoomResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import type { RoomScope } from '../harness/api-client.ts';
import { expectError, expectStatus } from '../harness/assertions.ts';
import { MODES, sharedStack, type Actors, type Stack } from '../harness/stacks.ts';

for (const mode of MODES) {
  describe(`[${mode}] section 5 authentication`, function () {
    this.timeout(60_000);
    let stack: Stack;
    before(async () => {
      stack = await sharedStack(mode);
    });

    /** Sends every operation with `authorization` (a raw header value or none) and expects one answer. */
    async function expectEveryOperation(scopes: RoomScope[], authorization: string | undefined, status: number, code: string) {
      const headers = authorization === undefined ? {} : { authorization };
      for (const scope of scopes) {
        const base = scope.branchId ? `/v1/repositories/${scope.repositoryId}/branches/${scope.branchId}/room` : `/v1/repositories/${scope.repositoryId}/room`;
        expectError(await stack.api.send({ method: 'GET', path: base, headers }), status, code);
        expectError(await stack.api.send({ method: 'GET', path: `${base}/messages`, headers }), status, code);
        expectError(await stack.api.send({ method: 'POST', path: `${base}/messages`, headers: { ...headers, 'idempotency-key': '01J0000000000000000000000A' }, json: { bodyMarkdown: 'x' } }), status, code);
      }
    }

    async function setup(): Promise<{ scopes: RoomScope[]; actors: Actors }> {
      const { scenario, actors } = await stack.scenario();
      return { scopes: [{ repositoryId: scenario.repositoryId }, { repositoryId: scenario.repositoryId, branchId: scenario.branchId }], actors };
    }

    it('section 5: a missing or blank Authorization header gives 401 AUTHENTICATION_REQUIRED', async () => {
      const { scopes } = await setup();
      await expectEveryOperation(scopes, undefined, 401, 'AUTHENTICATION_REQUIRED');
      await expectEveryOperation(scopes, '', 401, 'AUTHENTICATION_REQUIRED');
    });

    it('section 5: garbage, non-bearer schemes and malformed bearer values give 401 TOKEN_REJECTED', async () => {
      const { scopes, actors } = await setup();
      const human = await actors.writer();
      for (const value of ['Bearer garbage', 'Bearer a.b.c', 'Bearer ', 'Bearer', `Token ${human}`, `Basic ${Buffer.from(`writer:${human}`).toString('base64')}`, `Basic ${Buffer.from(`service-bot:${human}`).toString('base64')}`, `Bearer ${human}.extra`, `Bearer ${human.slice(0, -3)}abc`, `Bearer ${'x'.repeat(16_000)}`]) {
        await expectEveryOperation(scopes.slice(0, 1), value, 401, 'TOKEN_REJECTED');
      }
    });

    it('section 5: an identity-provider ID token is rejected with 401 TOKEN_REJECTED', async () => {
      const { scopes, actors } = await setup();
      await expectEveryOperation(scopes, `Bearer ${await actors.mint({ type: 'id_token', subjectId: actors.scenario.users.writer })}`, 401, 'TOKEN_REJECTED');
    });

    it('section 5: a marketplace app token is rejected with 401 TOKEN_REJECTED', async () => {
      const { scopes, actors } = await setup();
      await expectEveryOperation(scopes, `Bearer ${await actors.mint({ type: 'app', subjectId: actors.scenario.users.writer })}`, 401, 'TOKEN_REJECTED');
    });

    it('section 5: a core resource credential used as the bearer token is rejected with 401 TOKEN_REJECTED', async () => {
      const { scopes, actors } = await setup();
      await expectEveryOperation(scopes, `Bearer ${await actors.coreResource()}`, 401, 'TOKEN_REJECTED');
    });

    it('section 5: expired human and bot tokens are rejected with 401 TOKEN_REJECTED', async () => {
      const { scopes, actors } = await setup();
      const s = actors.scenario;
      await expectEveryOperation(scopes, `Bearer ${await actors.mint({ type: 'human', subjectId: s.users.writer, expiresInSeconds: -60 })}`, 401, 'TOKEN_REJECTED');
      await expectEveryOperation(scopes, `Bearer ${await actors.mint({ type: 'bot', subjectId: s.bots.appender.id, credentialId: s.bots.appender.credentialId, expiresInSeconds: -60 })}`, 401, 'TOKEN_REJECTED');
    });

    it('section 5: a bot token of a revoked credential is rejected with 401 TOKEN_REJECTED (terminal: never reclassified)', async () => {
      const { scopes, actors } = await setup();
      await expectEveryOperation(scopes, `Bearer ${await actors.revokedBot()}`, 401, 'TOKEN_REJECTED');
    });

    it('section 5: a bot token stops working as soon as core revokes its credential', async () => {
      const { scopes, actors } = await setup();
      const token = await actors.appendBot();
      expectStatus(await stack.api.getRoom(scopes[0]!, token), 200);
      const s = actors.scenario;
      await stack.fixture.updateBots((bots) => {
        const bot = bots.find((b) => b.id === s.bots.appender.id)!;
        bot.credentials.find((c) => c.id === s.bots.appender.credentialId)!.state = 'revoked';
      });
      await expectEveryOperation(scopes, `Bearer ${token}`, 401, 'TOKEN_REJECTED');
    });

    /** The claims of a token, read without verifying it (the test minted it). */
    const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string; client_id: string };

    it('section 5 revocation: a revoked human token is refused (401 TOKEN_REJECTED) from its next request on; the same person\'s other tokens keep working', async () => {
      const { scopes, actors } = await setup();
      const s = actors.scenario;
      const [leaked, other] = await Promise.all([0, 1].map(() => stack.core.mintToken({ type: 'human', subjectId: s.users.writer })));
      // Verified and used first, so chat holds it in its verified-token cache.
      expectStatus(await stack.api.getRoom(scopes[0]!, leaked!), 200);
      expectStatus(await stack.api.append(scopes[0]!, leaked!, { bodyMarkdown: 'before the leak was noticed' }), 201);
      await stack.core.revoke({ jti: claimsOf(leaked!).jti });
      await expectEveryOperation(scopes, `Bearer ${leaked}`, 401, 'TOKEN_REJECTED');
      // Refused the same way for a repository that does not exist: the answer tells nothing about rooms.
      expectError(await stack.api.getRoom({ repositoryId: ulid() }, leaked!), 401, 'TOKEN_REJECTED');
      expectStatus(await stack.api.getRoom(scopes[1]!, other!), 200);
      expectStatus(await stack.api.append(scopes[0]!, other!, { bodyMarkdown: 'from another token' }), 201);
      const list = await stack.api.list<{ items: MessageResponse[] }>(scopes[0]!, other!);
      expect(list.body.items.map((m) => m.bodyMarkdown)).to.deep.equal(['before the leak was noticed', 'from another token']);
    });

    it('section 5 revocation: uninstalling a marketplace app refuses its tokens for that person (401 TOKEN_REJECTED); other apps and people are unaffected', async () => {
      const { scopes, actors } = await setup();
      const s = actors.scenario;
      const app = `app-${ulid().toLowerCase()}`;
      const [writerViaApp, readerViaApp, writerViaDemo] = await Promise.all([
        stack.core.mintToken({ type: 'human', subjectId: s.users.writer, clientId: app }),
        stack.core.mintToken({ type: 'human', subjectId: s.users.reader, clientId: app }),
        stack.core.mintToken({ type: 'human', subjectId: s.users.writer }),
      ]);
      for (const token of [writerViaApp, readerViaApp, writerViaDemo]) expectStatus(await stack.api.getRoom(scopes[0]!, token), 200);
      await stack.core.revoke({ clientId: app, subjectId: s.users.writer });
      await expectEveryOperation(scopes, `Bearer ${writerViaApp}`, 401, 'TOKEN_REJECTED');
      expectStatus(await stack.api.getRoom(scopes[0]!, readerViaApp), 200);
      expectStatus(await stack.api.append(scopes[1]!, writerViaDemo, { bodyMarkdown: 'through the demo app' }), 201);
    });

    it('section 5 botBearer: room:read lets a bot read room metadata and lists; message:append lets it append', async () => {
      const { scopes, actors } = await setup();
      for (const scope of scopes) {
        const room = await stack.api.getRoom<RoomResponse>(scope, await actors.readBot());
        expectStatus(room, 200);
        expectStatus(await stack.api.list(scope, await actors.readBot()), 200);
        expectStatus(await stack.api.append(scope, await actors.appendBot(), { bodyMarkdown: 'from a bot' }), 201);
        expectStatus(await stack.api.list(scope, await actors.appendBot()), 200);
      }
    });

    it('section 5 chatOAuthBearer: read authority for reads, write authority for appends; a non-member gets 403 (not 401)', async () => {
      const { scopes, actors } = await setup();
      for (const scope of scopes) {
        expectStatus(await stack.api.getRoom(scope, await actors.reader()), 200);
        expectStatus(await stack.api.list(scope, await actors.reader()), 200);
        expectError(await stack.api.append(scope, await actors.reader(), { bodyMarkdown: 'x' }), 403, 'AUTHORIZATION_DENIED');
        expectStatus(await stack.api.append(scope, await actors.writer(), { bodyMarkdown: 'x' }), 201);
        expectError(await stack.api.getRoom(scope, await actors.outsider()), 403, 'AUTHORIZATION_DENIED');
      }
    });

    it('section 2 attribution: stored messages carry the decision ID, authorizing subject and kind, bot credential and grant', async () => {
      const { scopes, actors } = await setup();
      const s = actors.scenario;
      const human = await stack.api.append<MessageResponse>(scopes[0]!, await actors.writer(), { bodyMarkdown: 'by a person' });
      const bot = await stack.api.append<MessageResponse>(scopes[0]!, await actors.appendBot(), { bodyMarkdown: 'by a bot' });
      expect(human.body).to.include({ senderKind: 'user', senderId: s.users.writer, authorizingSubjectKind: 'user', authorizingSubjectId: s.users.writer, botCredentialId: null, botGrantId: null });
      expect(bot.body).to.include({ senderKind: 'bot', senderId: s.bots.appender.id, authorizingSubjectKind: 'organization', authorizingSubjectId: s.organizationId, botCredentialId: s.bots.appender.credentialId, botGrantId: s.bots.appender.grantId });
      expect(human.body.authorizationDecisionId).to.be.a('string').with.length.greaterThan(0);
      expect(bot.body.authorizationDecisionId).to.be.a('string').with.length.greaterThan(0);
      expect(human.body.authorizationDecisionId).to.not.equal(bot.body.authorizationDecisionId);
      // The list shows the same attribution as the append answers.
      const list = await stack.api.list<{ items: MessageResponse[] }>(scopes[0]!, await actors.readBot());
      expect(list.body.items).to.deep.equal([human.body, bot.body]);
    });
  });
}
