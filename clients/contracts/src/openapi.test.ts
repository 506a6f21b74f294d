import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { buildOpenApiDocument, openApiDocument, serializeOpenApiDocument } from './openapi.ts';

const COMMITTED_PATH = new URL('../openapi.json', import.meta.url);
const REGENERATE = 'openapi.json is stale: run `pnpm --filter @chat/contracts openapi:generate` and commit the result';

type Json = Record<string, unknown>;
const built = buildOpenApiDocument();
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function operations(document: Json): Array<{ path: string; method: string; op: Json }> {
  const out: Array<{ path: string; method: string; op: Json }> = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of METHODS) if (item[method]) out.push({ path, method, op: item[method] as Json });
  }
  return out;
}

function resolve(document: Json, ref: string): unknown {
  expect(ref.startsWith('#/'), ref).to.equal(true);
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((node, part) => (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
}

/** Follows a Reference Object to what it names. */
function deref(document: Json, node: Json): Json {
  return typeof node.$ref === 'string' ? (resolve(document, node.$ref) as Json) : node;
}

describe('OpenAPI document', () => {
  it('committed openapi.json equals buildOpenApiDocument()', () => {
    const text = readFileSync(COMMITTED_PATH, 'utf8');
    expect(text, REGENERATE).to.equal(serializeOpenApiDocument(built));
    expect(openApiDocument, REGENERATE).to.deep.equal(JSON.parse(serializeOpenApiDocument(built)));
  });

  it('is OpenAPI 3.1 at contract version 1.0.0', () => {
    expect(built.openapi).to.equal('3.1.0');
    expect((built.info as Json).version).to.equal('1.0.0');
    expect((built.info as Json).title).to.be.a('string');
  });

  it('resolves every $ref', () => {
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node !== null && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref') refs.push(value as string);
          else walk(value);
        }
      }
    };
    walk(built);
    expect(refs.length).to.be.greaterThan(50);
    for (const ref of refs) expect(resolve(built, ref), ref).not.to.equal(undefined);
  });

  it('has the eleven operations of spec section 4 and the marked extensions, each operationId once, all under /v1', () => {
    const ops = operations(built);
    const ids = ops.filter(({ op }) => op['x-chat-extension'] === undefined).map(({ op }) => op.operationId);
    expect(ids).to.have.members([
      'getRepositoryRoom', 'getBranchRoom', 'listRepositoryMessages', 'listBranchMessages', 'appendRepositoryMessage',
      'appendBranchMessage', 'streamRepositoryRoom', 'streamBranchRoom', 'listRepositoryInbox', 'acknowledgeRepositoryInbox',
      'streamRepositoryInbox',
    ]);
    const extensions = ops.filter(({ op }) => op['x-chat-extension'] === true);
    expect(extensions.map(({ op }) => op.operationId)).to.have.members([
      'listRepositoryMessageHistory', 'listBranchMessageHistory', 'listPrincipalInbox', 'acknowledgePrincipalInbox', 'streamPrincipalInbox',
      'searchRepository', 'searchRepositoryRoom', 'searchBranchRoom',
      'createWebhook', 'listWebhooks', 'deleteWebhook', 'listWebhookDeadLetters', 'redeliverWebhookDeliveries',
    ]);
    // An extension adds paths of its own: no operation of the contract changes.
    for (const { path } of extensions) expect(ops.filter((o) => o.path === path && o.op['x-chat-extension'] !== true)).to.have.length(0);
    const all = ops.map(({ op }) => op.operationId);
    expect(new Set(all).size).to.equal(all.length);
    for (const { path } of ops) expect(path).to.match(/^\/v1\//);
    expect(Object.keys(built.paths as Json)).not.to.include('/v1/openapi.json');
  });

  it('gives every response X-Request-Id, every 429 Retry-After, every 503 an optional Retry-After and every error the envelope', () => {
    for (const { op } of operations(built)) {
      for (const [status, raw] of Object.entries(op.responses as Record<string, Json>)) {
        const response = deref(built, raw);
        const headers = response.headers as Record<string, Json>;
        expect(deref(built, headers['X-Request-Id']!).required, `${op.operationId} ${status}`).to.equal(true);
        if (status === '429') expect(deref(built, headers['Retry-After']!).required, `${op.operationId} 429`).to.equal(true);
        if (status === '503') expect(deref(built, headers['Retry-After']!).required, `${op.operationId} 503`).to.equal(false);
        if (Number(status) >= 400) {
          const content = response.content as Record<string, Json>;
          expect(content['application/json']!.schema).to.deep.equal({ $ref: '#/components/schemas/ErrorEnvelope' });
        }
      }
    }
  });

  it('lists exactly the statuses of spec section 4 per operation', () => {
    const expected: Record<string, number[]> = {
      getRepositoryRoom: [200, 400, 401, 403, 503],
      getBranchRoom: [200, 400, 401, 403, 503],
      listRepositoryMessages: [200, 400, 401, 403, 503],
      listBranchMessages: [200, 400, 401, 403, 503],
      listRepositoryInbox: [200, 400, 401, 403, 503],
      appendRepositoryMessage: [200, 201, 400, 401, 403, 409, 429, 503],
      appendBranchMessage: [200, 201, 400, 401, 403, 409, 429, 503],
      streamRepositoryRoom: [200, 400, 401, 403, 409, 429, 503],
      streamBranchRoom: [200, 400, 401, 403, 409, 429, 503],
      streamRepositoryInbox: [200, 400, 401, 403, 503],
      acknowledgeRepositoryInbox: [200, 400, 401, 403, 404, 409, 503],
      listRepositoryMessageHistory: [200, 400, 401, 403, 503],
      listBranchMessageHistory: [200, 400, 401, 403, 503],
      listPrincipalInbox: [200, 400, 401, 503],
      acknowledgePrincipalInbox: [200, 400, 401, 404, 409, 503],
      streamPrincipalInbox: [200, 400, 401, 503],
      searchRepository: [200, 400, 401, 403, 429, 503],
      searchRepositoryRoom: [200, 400, 401, 403, 429, 503],
      searchBranchRoom: [200, 400, 401, 403, 429, 503],
      createWebhook: [201, 400, 401, 409, 503],
      listWebhooks: [200, 400, 401, 503],
      deleteWebhook: [204, 400, 401, 404, 503],
      listWebhookDeadLetters: [200, 400, 401, 404, 503],
      redeliverWebhookDeliveries: [202, 400, 401, 404, 503],
    };
    for (const { op } of operations(built)) {
      expect(Object.keys(op.responses as Json).map(Number), op.operationId as string).to.deep.equal(expected[op.operationId as string]);
    }
  });

  it('accepts either bearer scheme on every operation', () => {
    const schemes = (built.components as Json).securitySchemes as Record<string, Json>;
    for (const name of ['chatOAuthBearer', 'botBearer']) expect(schemes[name]).to.include({ type: 'http', scheme: 'bearer' });
    for (const { op } of operations(built)) {
      expect(op.security).to.deep.equal([{ chatOAuthBearer: [] }, { botBearer: [] }]);
    }
  });

  it('declares the parameters of spec section 4 on the right operations', () => {
    for (const { path, method, op } of operations(built)) {
      const params = (op.parameters as Json[]).map((p) => deref(built, p));
      const byName = new Map(params.map((p) => [p.name as string, p]));
      const id = op.operationId as string;
      for (const match of path.matchAll(/\{(\w+)\}/g)) {
        expect(byName.get(match[1]!), `${id} ${match[1]}`).to.include({ in: 'path', required: true });
        expect((byName.get(match[1]!)!.schema as Json).pattern).to.equal('^[0-7][0-9A-HJKMNP-TV-Z]{25}$');
      }
      expect(byName.get('X-Request-Id'), id).to.include({ in: 'header', required: false });
      const paged = /^(list|search)/.test(id) && id !== 'listWebhooks';
      expect(byName.has('limit'), id).to.equal(paged);
      const history = /MessageHistory$/.test(id);
      const search = /^search/.test(id);
      expect(byName.has('cursor'), id).to.equal((paged || /^stream/.test(id)) && !history);
      expect(byName.get('q')?.required, id).to.equal(search ? true : undefined);
      expect(byName.has('order'), id).to.equal(search);
      for (const name of ['before', 'after', 'at']) expect(byName.get(name)?.required ?? true, `${id} ${name}`).to.equal(!history);
      expect(byName.has('Last-Event-ID'), id).to.equal(/^stream/.test(id));
      expect(byName.get('Idempotency-Key')?.required ?? false, id).to.equal(/^append/.test(id));
      expect(byName.has('X-Service-Core-Authorization'), id).to.equal(/^append/.test(id));
      expect(op.requestBody !== undefined, id).to.equal(method === 'post');
      if (/^stream/.test(id)) {
        const ok = (op.responses as Record<string, Json>)['200']!;
        expect(Object.keys(ok.content as Json)).to.deep.equal(['text/event-stream']);
        for (const event of ['heartbeat', 'handoff', 'reauthorize']) expect(ok.description).to.include(`\`${event}\``);
        expect(ok.description).to.include(/Inbox$/.test(id) ? '`notification`' : '`message`');
      }
    }
  });

  it('declares the principal inbox operations on the caller\'s feed, with the spec\'s inbox bodies and feed cursors', () => {
    const byId = new Map(operations(built).map((o) => [o.op.operationId as string, o]));
    const list = byId.get('listPrincipalInbox')!;
    const acknowledge = byId.get('acknowledgePrincipalInbox')!;
    const stream = byId.get('streamPrincipalInbox')!;
    expect([list, acknowledge, stream].map(({ method, path }) => `${method} ${path}`)).to.deep.equal([
      'get /v1/inbox',
      'post /v1/inbox/acknowledgements',
      'get /v1/inbox/events',
    ]);
    const okSchema = (o: { op: Json }) => (((o.op.responses as Record<string, Json>)['200']!.content as Record<string, Json>)['application/json']!.schema);
    expect(okSchema(list)).to.deep.equal({ $ref: '#/components/schemas/InboxPageResponse' });
    expect(okSchema(acknowledge)).to.deep.equal({ $ref: '#/components/schemas/AcknowledgeInboxResponse' });
    expect(((acknowledge.op.requestBody as Json).content as Record<string, Json>)['application/json']!.schema).to.deep.equal({
      $ref: '#/components/schemas/AcknowledgeInboxRequest',
    });
    const events = (stream.op.responses as Record<string, Json>)['200']!['x-sse-events'] as Json[];
    // The feed's notification, with its message under include=message.
    expect(events[0]).to.deep.include({ event: 'notification', data: { $ref: '#/components/schemas/FeedNotificationResponse' } });
    expect(events[0]!.id).to.include('feed cursor');
    for (const { op } of [list, stream]) {
      const cursor = (op.parameters as Json[]).map((p) => deref(built, p)).find((p) => p.name === 'cursor')!;
      expect(cursor.description, op.operationId as string).to.include('feed cursor');
    }
  });

  it('declares the webhook operations on the caller\'s own webhooks, with their bodies, a 204 without one, and a dead-letter cursor', () => {
    const byId = new Map(operations(built).map((o) => [o.op.operationId as string, o]));
    const ids = ['createWebhook', 'listWebhooks', 'deleteWebhook', 'listWebhookDeadLetters', 'redeliverWebhookDeliveries'];
    expect(ids.map((id) => `${byId.get(id)!.method} ${byId.get(id)!.path}`)).to.deep.equal([
      'post /v1/webhooks',
      'get /v1/webhooks',
      'delete /v1/webhooks/{webhookId}',
      'get /v1/webhooks/{webhookId}/dead-letters',
      'post /v1/webhooks/{webhookId}/redeliveries',
    ]);
    const schemaOf = (content: unknown) => ((content as Record<string, Json>)['application/json']!.schema);
    const answer = (id: string, status: string) => (byId.get(id)!.op.responses as Record<string, Json>)[status]!;
    expect(schemaOf(answer('createWebhook', '201').content)).to.deep.equal({ $ref: '#/components/schemas/CreateWebhookResponse' });
    expect(schemaOf(answer('listWebhooks', '200').content)).to.deep.equal({ $ref: '#/components/schemas/WebhookListResponse' });
    expect(answer('deleteWebhook', '204').content).to.equal(undefined);
    expect(schemaOf(answer('listWebhookDeadLetters', '200').content)).to.deep.equal({ $ref: '#/components/schemas/WebhookDeadLetterPageResponse' });
    expect(schemaOf(answer('redeliverWebhookDeliveries', '202').content)).to.deep.equal({ $ref: '#/components/schemas/RedeliverWebhookResponse' });
    expect(schemaOf((byId.get('createWebhook')!.op.requestBody as Json).content)).to.deep.equal({ $ref: '#/components/schemas/CreateWebhookRequest' });
    expect(schemaOf((byId.get('redeliverWebhookDeliveries')!.op.requestBody as Json).content)).to.deep.equal({ $ref: '#/components/schemas/RedeliverWebhookRequest' });
    const cursor = (byId.get('listWebhookDeadLetters')!.op.parameters as Json[]).map((p) => deref(built, p)).find((p) => p.name === 'cursor')!;
    expect(cursor.description).to.include('dead letters');
    for (const id of ids) expect((byId.get(id)!.op.tags as string[])[0], id).to.equal('webhooks');
  });
});
