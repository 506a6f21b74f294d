import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InProcessBackbone } from '@chat/backbone';
import { startDevCore, type DevCoreHandle } from '@chat/dev-core';
import { createLogger } from '@chat/observability';
import { migrate, openDatabase, type Database, type InboxOwner, type NotificationRow, type Store } from '@chat/store';
import {
  CreateWebhookResponseSchema,
  ErrorEnvelopeSchema,
  openApiDocument,
  RedeliverWebhookResponseSchema,
  WebhookDeadLetterPageResponseSchema,
  WebhookListResponseSchema,
} from '@chat/contracts';
import { deliveryIdOf } from '@chat/webhooks';
import { feedCursorBinding, inboxCursorBinding } from '@chat/wire-format';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { assembleProcessResources } from '@chat/process-resources';
import { createApiRuntime, type ApiRuntime } from '../runtime.ts';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SERVICE_TOKEN = 'webhook-routes-test-service-token';
/** Webhooks a principal may hold in this suite. */
const PER_PRINCIPAL = 3;

/** The component schemas the webhook operations answer with, by the name the OpenAPI document gives them. */
const SCHEMAS = {
  CreateWebhookResponse: CreateWebhookResponseSchema,
  WebhookListResponse: WebhookListResponseSchema,
  WebhookDeadLetterPageResponse: WebhookDeadLetterPageResponseSchema,
  RedeliverWebhookResponse: RedeliverWebhookResponseSchema,
  ErrorEnvelope: ErrorEnvelopeSchema,
};

type Json = Record<string, any>;
interface Answer {
  status: number;
  body: any;
  contentType: string | null;
}

/** Checks an answer against the OpenAPI document: a status the operation lists, a body of the schema it names (none for a 204). */
function expectDocumented(method: string, template: string, answer: Answer): void {
  const operation = (openApiDocument.paths as Json)[template][method.toLowerCase()] as Json;
  let response = operation.responses[String(answer.status)] as Json | undefined;
  expect(response, `${operation.operationId} lists ${answer.status}`).to.not.equal(undefined);
  if (typeof response!.$ref === 'string') response = (openApiDocument.components as Json).responses[response!.$ref.split('/').at(-1)!];
  if (response!.content === undefined) {
    expect(answer.body, `${operation.operationId} ${answer.status} has no body`).to.equal(undefined);
    expect(answer.contentType).to.equal(null);
    return;
  }
  const ref = response!.content['application/json'].schema.$ref as string;
  const schema = SCHEMAS[ref.split('/').at(-1) as keyof typeof SCHEMAS];
  const parsed = schema.safeParse(answer.body);
  expect(parsed.success, `${operation.operationId} ${answer.status}: ${JSON.stringify(answer.body)}`).to.equal(true);
}

interface Names {
  bot: string;
  bob: string;
}

function fixture(repositories: { r1: string; r2: string; r3: string }, names: Names, options: { grantOnR2?: string; credential?: string } = {}) {
  const grant = (id: string, repositoryId: string, state = 'active') => ({ id, repositoryId, subject: { kind: 'organization', id: 'o_acme' }, capabilities: ['room:read'], state });
  return {
    users: [{ id: 'u_alice' }, { id: names.bob }],
    organizations: [{ id: 'o_acme' }],
    repositories: [
      { id: repositories.r1, state: 'active', branches: [], members: { u_alice: 'write', [names.bob]: 'read' } },
      { id: repositories.r2, state: 'active', branches: [], members: { u_alice: 'write' } },
      { id: repositories.r3, state: 'active', branches: [], members: { u_alice: 'write' } },
    ],
    bots: [
      {
        id: names.bot,
        credentials: [{ id: `c_${names.bot}`, state: options.credential ?? 'active' }],
        grants: [grant(`g1_${names.bot}`, repositories.r1), grant(`g2_${names.bot}`, repositories.r2, options.grantOnR2)],
      },
    ],
  };
}

/** Where each suite runs: real PostgreSQL, and the embedded PGlite the all-in-one uses. */
const TARGETS = [
  { name: 'PostgreSQL', open: () => openDatabase({ kind: 'postgres', url: DATABASE_URL, poolSize: 10 }) },
  { name: 'PGlite', open: () => openDatabase({ kind: 'pglite' }) },
];

for (const target of TARGETS) {
  describe(`webhook routes over HTTP (${target.name}, dev-core)`, function () {
    this.timeout(60_000);
    let database: Database;
    let core: DevCoreHandle;
    let api: ApiRuntime;
    let store: Store;
    let server: Server;
    let base: string;
    let repos: { r1: string; r2: string; r3: string };
    let names: Names;
    const tokens: Record<string, string> = {};

    before(async () => {
      const logger = createLogger({ name: 'webhook-routes-test', level: 'silent' });
      repos = { r1: ulid(), r2: ulid(), r3: ulid() };
      names = { bot: 'b_hook', bob: 'u_bob' };
      core = await startDevCore({ port: 0, serviceToken: SERVICE_TOKEN, fixture: fixture(repos, names), logger });
      database = await target.open();
      await migrate(database);
      const resources = await assembleProcessResources({
        database,
        backbone: new InProcessBackbone(),
        logger,
        core: { url: core.url, serviceToken: SERVICE_TOKEN, timeoutMs: 2000 },
        cursor: { secret: undefined, previousSecrets: [] },
      });
      api = createApiRuntime({
        resources,
        logger,
        bodyLimitBytes: 262_144,
        rateLimit: { limit: 120, windowSeconds: 60, per: 'sender-room' },
        // As in production: no loopback; one private range let through, as for an in-cluster receiver.
        webhooks: { allowLoopback: false, allowedCidrs: ['10.20.0.0/16'], perPrincipal: PER_PRINCIPAL },
      });
      store = api.deps.store;
      server = createServer(api.listener).listen(0, '127.0.0.1');
      await once(server, 'listening');
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      server.close();
      server.closeAllConnections();
      await database.close();
      await core.close();
    });
    beforeEach(async () => {
      repos = { r1: ulid(), r2: ulid(), r3: ulid() };
      const suffix = ulid().toLowerCase();
      names = { bot: `b_hook${suffix}`, bob: `u_bob${suffix}` };
      core.replaceFixture(fixture(repos, names));
      core.setFaults({ authorization: 'ok' });
      tokens.bot = await core.mintToken({ type: 'bot', subjectId: names.bot });
      tokens.bob = await core.mintToken({ type: 'human', subjectId: names.bob });
    });
    afterEach(() => core.setFaults({ authorization: 'ok' }));

    async function call(method: string, path: string, as: string | null, body?: unknown): Promise<Answer> {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { ...(as ? { authorization: `Bearer ${tokens[as]}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      expect(response.headers.get('x-request-id')).to.be.a('string');
      expect(response.headers.get('cache-control')).to.equal('no-store');
      return { status: response.status, body: text ? JSON.parse(text) : undefined, contentType: response.headers.get('content-type') };
    }

    /** One call of a webhook operation, checked against the OpenAPI document. */
    async function op(method: string, template: string, path: string, as: string | null, body?: unknown): Promise<Answer> {
      const answer = await call(method, path, as, body);
      expectDocumented(method, template, answer);
      return answer;
    }
    const create = (as: string | null, body: unknown) => op('POST', '/v1/webhooks', '/v1/webhooks', as, body);
    const list = (as: string | null) => op('GET', '/v1/webhooks', '/v1/webhooks', as);
    const remove = (as: string | null, id: string) => op('DELETE', '/v1/webhooks/{webhookId}', `/v1/webhooks/${id}`, as);
    const deadLetters = (as: string | null, id: string, query = '') => op('GET', '/v1/webhooks/{webhookId}/dead-letters', `/v1/webhooks/${id}/dead-letters${query}`, as);
    const redeliver = (as: string | null, id: string, body: unknown) => op('POST', '/v1/webhooks/{webhookId}/redeliveries', `/v1/webhooks/${id}/redeliveries`, as, body);

    const botOwner = (repositoryId: string): InboxOwner => ({ repositoryId, principalKind: 'bot', principalId: names.bot });

    /** A webhook of the bot's, registered through the API. */
    async function registered(url = 'https://bot.example/hook'): Promise<string> {
      const answer = await create('bot', { url });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
      return answer.body.webhook.webhookId;
    }

    /** A notification of `owner`, given up on by `webhookId` at `deadAt`, as the delivery engine records one. */
    async function deadLetter(webhookId: string, owner: InboxOwner, deadAt: Date): Promise<{ deliveryId: string; notification: NotificationRow }> {
      const outcome = await store.notifications.append(
        owner,
        { messageId: ulid(), roomId: ulid(), branchId: null, senderKind: 'user', senderId: 'u_alice', spans: [{ startByte: 0, endByte: 4 }] },
        { now: new Date(), outboxPayload: () => '{}' },
      );
      if (outcome.kind !== 'created') throw new Error('expected a new notification');
      const { notification } = outcome;
      const deliveryId = deliveryIdOf(webhookId, notification.notificationId);
      await store.webhooks.deadLetter({ webhookId, inboxKey: notification.inboxKey }, { notification, deliveryId, attempts: 8, error: 'HTTP 500 from the receiver', now: deadAt });
      return { deliveryId, notification };
    }

    describe('createWebhook and listWebhooks', function () {
      it('registers webhooks with a made or a given secret, shows each secret once, and lists them oldest first', async function () {
        const made = await create('bot', { url: 'https://Bot.Example:8443/hooks/chat?team=ci' });
        expect(made.status).to.equal(201);
        expect(made.body.webhook).to.include({ url: 'https://bot.example:8443/hooks/chat?team=ci' });
        expect(made.body.secret).to.match(/^[A-Za-z0-9_-]{43}$/);
        const given = await create('bot', { url: 'https://10.20.3.4/hook', secret: 'a chosen secret, 16+ chars' });
        expect(given.status).to.equal(201);
        expect(given.body.secret).to.equal('a chosen secret, 16+ chars');
        const stored = await store.webhooks.find(given.body.webhook.webhookId);
        expect(stored).to.include({ secret: 'a chosen secret, 16+ chars', principalKind: 'bot', principalId: names.bot });
        expect((await store.webhooks.find(made.body.webhook.webhookId))!.secret).to.equal(made.body.secret);

        const listed = await list('bot');
        expect(listed.status).to.equal(200);
        expect(listed.body).to.deep.equal({ items: [made.body.webhook, given.body.webhook] });
        expect(JSON.stringify(listed.body)).not.to.contain(made.body.secret).and.not.to.contain('a chosen secret');
        // Each principal sees its own only.
        expect((await list('bob')).body).to.deep.equal({ items: [] });
      });

      it('refuses a URL the notifier would not send to: not https, a private, loopback or link-local address, credentials', async function () {
        const refused: Array<[string, RegExp]> = [
          ['http://bot.example/hook', /must be https/],
          ['ftp://bot.example/hook', /must be https/],
          ['https://10.0.0.5/hook', /private, loopback or link-local/],
          ['https://192.168.1.10/hook', /private, loopback or link-local/],
          ['https://169.254.169.254/latest/meta-data', /private, loopback or link-local/],
          ['https://[fd00::1]/hook', /private, loopback or link-local/],
          ['https://[::ffff:10.0.0.5]/hook', /private, loopback or link-local/],
          ['https://127.0.0.1/hook', /private, loopback or link-local/],
          ['http://127.0.0.1:9000/hook', /must be https/],
          ['https://localhost/hook', /loopback/],
          ['https://user:pass@bot.example/hook', /credentials/],
          ['https://bot.example/hook#part', /fragment/],
          ['bot.example/hook', /not an absolute URL/],
        ];
        for (const [url, reason] of refused) {
          const answer = await create('bot', { url });
          expect(answer.status, url).to.equal(400);
          expect(answer.body.error.code, url).to.equal('REQUEST_INVALID');
          expect(answer.body.error.message, url).to.match(/^The webhook URL is refused: /).and.match(reason);
        }
        expect((await list('bot')).body.items).to.deep.equal([]);
      });

      it('refuses bodies that are not a CreateWebhookRequest', async function () {
        const bodies: unknown[] = [
          {},
          { url: 5 },
          { url: '' },
          { url: `https://bot.example/${'x'.repeat(2030)}` },
          { url: 'https://bot.example/hook', secret: 'fifteen-chars-x' },
          { url: 'https://bot.example/hook', secret: 'x'.repeat(257) },
          { url: 'https://bot.example/hook', secret: 'sixteen chars, é!' },
          { url: 'https://bot.example/hook', secret: 'tab\tin-sixteen-chars' },
          { url: 'https://bot.example/hook', extra: true },
          ['https://bot.example/hook'],
          '{"url":',
        ];
        for (const body of bodies) {
          const answer = await create('bot', body);
          expect(answer.status, JSON.stringify(body)).to.equal(400);
          expect(answer.body.error.code).to.equal('REQUEST_INVALID');
        }
        // 2048 characters is the longest URL taken.
        const longest = `https://bot.example/${'x'.repeat(2048 - 'https://bot.example/'.length)}`;
        expect((await create('bot', { url: longest })).status).to.equal(201);
      });

      it('refuses a registration past the per-principal limit with 409, and counts each principal apart', async function () {
        for (let i = 0; i < PER_PRINCIPAL; i++) await registered(`https://bot.example/hook/${i}`);
        const past = await create('bot', { url: 'https://bot.example/one-too-many' });
        expect(past.status).to.equal(409);
        expect(past.body.error.code).to.equal('RESOURCE_CONFLICT');
        expect(past.body.error.message).to.contain(String(PER_PRINCIPAL));
        expect((await list('bot')).body.items).to.have.length(PER_PRINCIPAL);
        expect((await create('bob', { url: 'https://bob.example/hook' })).status).to.equal(201);
        // A removed webhook frees its place.
        await remove('bot', (await list('bot')).body.items[0].webhookId);
        expect((await create('bot', { url: 'https://bot.example/in-its-place' })).status).to.equal(201);
      });
    });

    describe('deleteWebhook', function () {
      it('removes the caller\'s webhook with 204, then answers 404; another principal\'s webhook, or none, is 404 and stays', async function () {
        const kept = await registered('https://bot.example/kept');
        const removed = await registered('https://bot.example/removed');
        const bobs = (await create('bob', { url: 'https://bob.example/hook' })).body.webhook.webhookId;
        const gone = await remove('bot', removed);
        expect(gone).to.deep.include({ status: 204, body: undefined });
        expect((await list('bot')).body.items.map((w: Json) => w.webhookId)).to.deep.equal([kept]);
        expect(await store.webhooks.find(removed)).to.equal(null);
        for (const id of [removed, bobs, ulid(), 'not-a-ulid', kept.toLowerCase()]) {
          const answer = await remove('bot', id);
          expect(answer.status, id).to.equal(404);
          expect(answer.body.error.code).to.equal('RESOURCE_NOT_FOUND');
        }
        expect(await store.webhooks.find(bobs)).to.not.equal(null);
        expect((await list('bot')).body.items).to.have.length(1);
      });
    });

    describe('listWebhookDeadLetters', function () {
      it('pages a webhook\'s dead letters in the order they died, each notification as its inbox shows it, with cursors bound to the webhook', async function () {
        const webhookId = await registered();
        const t = Date.now();
        // Two die at the same instant: the delivery ID orders them, and the cursor keeps the place between them.
        const letters = [
          await deadLetter(webhookId, botOwner(repos.r1), new Date(t)),
          await deadLetter(webhookId, botOwner(repos.r2), new Date(t + 5)),
          await deadLetter(webhookId, botOwner(repos.r1), new Date(t + 5)),
          await deadLetter(webhookId, botOwner(repos.r2), new Date(t + 9)),
        ];
        const order = [letters[0]!, ...[letters[1]!, letters[2]!].sort((a, b) => a.deliveryId.localeCompare(b.deliveryId)), letters[3]!];
        // The first notification of R1 is acknowledged in its inbox.
        const r1Inbox = inboxCursorBinding(botOwner(repos.r1));
        expect((await call('POST', `/v1/repositories/${repos.r1}/inbox/acknowledgements`, 'bot', { throughCursor: api.deps.cursors.encode(r1Inbox, letters[0]!.notification.seq) })).status).to.equal(200);

        const whole = await deadLetters('bot', webhookId);
        expect(whole.status).to.equal(200);
        expect(whole.body.nextCursor).to.equal(null);
        expect(whole.body.items.map((l: Json) => l.deliveryId)).to.deep.equal(order.map((l) => l.deliveryId));
        const first = whole.body.items[0];
        expect(first).to.deep.include({ deliveryId: `${webhookId}.${letters[0]!.notification.notificationId}`, state: 'dead', attempts: 8, lastError: 'HTTP 500 from the receiver', deadAt: new Date(t).toISOString() });
        expect(first.notification).to.deep.include({
          notificationId: letters[0]!.notification.notificationId,
          repositoryId: repos.r1,
          targetKind: 'bot',
          targetId: names.bot,
          cursor: api.deps.cursors.encode(r1Inbox, letters[0]!.notification.seq),
          acknowledged: true,
        });
        expect(whole.body.items.slice(1).map((l: Json) => l.notification.acknowledged)).to.deep.equal([false, false, false]);

        const walked: string[] = [];
        const cursors: string[] = [];
        let cursor: string | null = null;
        do {
          const page: Answer = await deadLetters('bot', webhookId, `?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          expect(page.status).to.equal(200);
          walked.push(...page.body.items.map((l: Json) => l.deliveryId));
          cursor = page.body.nextCursor;
          if (cursor) cursors.push(cursor);
        } while (cursor && walked.length < 10);
        expect(walked).to.deep.equal(order.map((l) => l.deliveryId));
        expect(cursors).to.have.length(3);
        for (const c of cursors) expect(c).to.match(/^[A-Za-z0-9_-]+$/).and.not.contain(webhookId);

        // A cursor of this webhook does not work on another, nor an edited, forged or other kind of cursor on this one.
        const other = await registered('https://bot.example/other');
        const foreign = [
          cursors[0]!,
          `${cursors[0]!.slice(0, 36)}${Buffer.from(order[2]!.deliveryId).toString('base64url')}`,
          `${cursors[0]!.slice(0, 35)}A${cursors[0]!.slice(36)}`,
          cursors[0]!.slice(0, 36),
          `${cursors[0]!}A`,
          'not-a-cursor',
          api.deps.cursors.encode(feedCursorBinding({ principalKind: 'bot', principalId: names.bot }), 1),
          api.deps.cursors.encode(r1Inbox, 1),
        ];
        for (const [i, c] of foreign.entries()) {
          const answer = await deadLetters('bot', i === 0 ? other : webhookId, `?cursor=${encodeURIComponent(c)}`);
          expect(answer.status, c).to.equal(400);
          expect(answer.body.error.code, c).to.equal('CURSOR_INVALID');
        }
        for (const limit of ['0', '201', 'abc', '-1']) expect((await deadLetters('bot', webhookId, `?limit=${limit}`)).body.error.code, limit).to.equal('LIMIT_INVALID');
        expect((await deadLetters('bot', other)).body).to.deep.equal({ items: [], nextCursor: null });
      });

      it('leaves out dead letters of repositories the caller may not read now, and moves on past them', async function () {
        const webhookId = await registered();
        const t = Date.now();
        const letters = [
          await deadLetter(webhookId, botOwner(repos.r2), new Date(t)),
          await deadLetter(webhookId, botOwner(repos.r1), new Date(t + 1)),
          await deadLetter(webhookId, botOwner(repos.r2), new Date(t + 2)),
        ];
        core.replaceFixture(fixture(repos, names, { grantOnR2: 'revoked' }));
        const first = await deadLetters('bot', webhookId, '?limit=1');
        expect(first.body.items).to.deep.equal([]);
        expect(first.body.nextCursor).to.be.a('string');
        const second = await deadLetters('bot', webhookId, `?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
        expect(second.body.items.map((l: Json) => l.deliveryId)).to.deep.equal([letters[1]!.deliveryId]);
        expect((await deadLetters('bot', webhookId)).body.items.map((l: Json) => l.deliveryId)).to.deep.equal([letters[1]!.deliveryId]);
      });

      it('answers 404 for another principal\'s webhook, or none', async function () {
        const bobs = (await create('bob', { url: 'https://bob.example/hook' })).body.webhook.webhookId;
        await deadLetter(bobs, { repositoryId: repos.r1, principalKind: 'human', principalId: names.bob }, new Date());
        for (const id of [bobs, ulid(), 'nope']) {
          const answer = await deadLetters('bot', id);
          expect(answer.status, id).to.equal(404);
          expect(answer.body.error.code).to.equal('RESOURCE_NOT_FOUND');
        }
        expect((await deadLetters('bob', bobs)).body.items).to.have.length(1);
      });
    });

    describe('redeliverWebhookDeliveries', function () {
      it('queues the named dead letters, or every one, under their delivery IDs, and lists only those it queued', async function () {
        const webhookId = await registered();
        const t = Date.now();
        const [a, b, c] = [
          await deadLetter(webhookId, botOwner(repos.r1), new Date(t)),
          await deadLetter(webhookId, botOwner(repos.r2), new Date(t + 1)),
          await deadLetter(webhookId, botOwner(repos.r1), new Date(t + 2)),
        ];
        const other = await registered('https://bot.example/other');
        const othersLetter = await deadLetter(other, botOwner(repos.r1), new Date(t + 3));

        const named = await redeliver('bot', webhookId, { deliveryIds: [a!.deliveryId, 'no-such-delivery', othersLetter.deliveryId] });
        expect(named).to.deep.include({ status: 202, body: { redelivering: [a!.deliveryId] } });
        const states = async () => (await deadLetters('bot', webhookId)).body.items.map((l: Json) => [l.deliveryId, l.state]);
        expect(await states()).to.deep.equal([
          [a!.deliveryId, 'redelivering'],
          [b!.deliveryId, 'dead'],
          [c!.deliveryId, 'dead'],
        ]);
        // Already redelivering: not queued again.
        expect((await redeliver('bot', webhookId, { deliveryIds: [a!.deliveryId] })).body).to.deep.equal({ redelivering: [] });
        const every = await redeliver('bot', webhookId, {});
        expect(every.status).to.equal(202);
        expect([...every.body.redelivering].sort()).to.deep.equal([b!.deliveryId, c!.deliveryId].sort());
        expect((await states()).map(([, state]: string[]) => state)).to.deep.equal(['redelivering', 'redelivering', 'redelivering']);
        expect((await deadLetters('bot', other)).body.items.map((l: Json) => l.state)).to.deep.equal(['dead']);
      });

      it('refuses bodies that are not a RedeliverWebhookRequest, and another principal\'s webhook with 404', async function () {
        const webhookId = await registered();
        const letter = await deadLetter(webhookId, botOwner(repos.r1), new Date());
        const bodies: unknown[] = [
          { deliveryIds: [] },
          { deliveryIds: Array.from({ length: 101 }, (_, i) => `${webhookId}.${i}`) },
          { deliveryIds: [5] },
          { deliveryIds: [''] },
          { deliveryIds: letter.deliveryId },
          { deliveryIds: [letter.deliveryId], all: true },
          [letter.deliveryId],
        ];
        for (const body of bodies) {
          const answer = await redeliver('bot', webhookId, body);
          expect(answer.status, JSON.stringify(body).slice(0, 60)).to.equal(400);
          expect(answer.body.error.code).to.equal('REQUEST_INVALID');
        }
        // 100 IDs is the most one request names.
        expect((await redeliver('bot', webhookId, { deliveryIds: [letter.deliveryId, ...Array.from({ length: 99 }, (_, i) => `x${i}`)] })).body).to.deep.equal({
          redelivering: [letter.deliveryId],
        });
        for (const id of [webhookId, ulid()]) {
          const answer = await redeliver('bob', id, {});
          expect(answer.status).to.equal(404);
          expect(answer.body.error.code).to.equal('RESOURCE_NOT_FOUND');
        }
      });
    });

    describe('authorization', function () {
      it('asks for a token, refuses a revoked credential with 401, answers 503 while core is unavailable, and 405 for other methods', async function () {
        const webhookId = await registered();
        const calls = [() => create(null, { url: 'https://bot.example/x' }), () => list(null), () => remove(null, webhookId), () => deadLetters(null, webhookId), () => redeliver(null, webhookId, {})];
        for (const make of calls) {
          const answer = await make();
          expect(answer.status).to.equal(401);
          expect(answer.body.error.code).to.equal('AUTHENTICATION_REQUIRED');
        }
        core.setFaults({ authorization: 'unavailable' });
        const unavailable = await list('bot');
        expect(unavailable.status).to.equal(503);
        expect(unavailable.body.error.code).to.equal('AUTHORIZATION_UNAVAILABLE');
        expect((await remove('bot', webhookId)).status).to.equal(503);
        core.setFaults({ authorization: 'ok' });
        core.replaceFixture(fixture(repos, names, { credential: 'revoked' }));
        const revoked = await create('bot', { url: 'https://bot.example/y' });
        expect(revoked.status).to.equal(401);
        expect(revoked.body.error.code).to.equal('TOKEN_REJECTED');
        expect((await remove('bot', webhookId)).body.error.code).to.equal('TOKEN_REJECTED');
        expect(await store.webhooks.find(webhookId)).to.not.equal(null);
        core.replaceFixture(fixture(repos, names));
        const wrong = await call('PUT', '/v1/webhooks', 'bot', {});
        expect(wrong.status).to.equal(405);
        expect((await call('PUT', `/v1/webhooks/${webhookId}`, 'bot', {})).status).to.equal(405);
      });
    });
  });
}
