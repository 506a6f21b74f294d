import { expect } from 'chai';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type CreateWebhookResponse, type RedeliverWebhookResponse, type Webhook, type WebhookDeadLetter } from '@chat/client';
import type { MessageResponse } from '@chat/contracts';
import { expectStatus } from '../harness/assertions.ts';
import { OpenApiValidator } from '../harness/openapi-validator.ts';
import { startStack, type Actors, type Stack } from '../harness/stacks.ts';
import type { Scenario } from '../harness/fixture-factory.ts';
import { mentionBody } from './bot-world.ts';
import { runChat, seenOutput, type ChatRun } from './cli-process.ts';

const validator = new OpenApiValidator();

/** Each line of `--json` output, checked against the named component schema. */
function jsonLines<T>(run: ChatRun, component: string): T[] {
  expect(run.code, run.stderr).to.equal(0);
  return run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const value = JSON.parse(line) as T;
      expect(validator.schemaProblems(component, value), line).to.deep.equal([]);
      return value;
    });
}

function expectApiError(run: ChatRun, code: string): void {
  expect(run.code, run.stderr).to.equal(1);
  expect(run.stderr).to.contain(code);
  expect(run.stderr).to.match(/request ID: [A-Za-z0-9._:-]+/);
}

/** A webhook receiver on this machine that answers every delivery with `status` and keeps what it got. */
class Receiver {
  status = 500;
  readonly received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(this.status).end();
    });
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  stop(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('[embedded] chat webhooks (the built CLI, as a child process)', function () {
  this.timeout(240_000);
  let stack: Stack;
  let scenario: Scenario;
  let actors: Actors;
  let env: Record<string, string>;
  const receiver = new Receiver();

  before(async () => {
    // One failed attempt makes a dead letter, so the test sees one within seconds.
    stack = await startStack('embedded', { WEBHOOK_MAX_ATTEMPTS: '1', WEBHOOK_TIMEOUT_MS: '2000' });
    ({ scenario, actors } = await stack.scenario());
    env = { CHAT_URL: stack.chat.url, CHAT_TOKEN: await actors.readBot() };
  });
  after(async () => {
    receiver.stop();
    // Never printed, in any run of this file.
    const token = await actors.readBot();
    for (const output of seenOutput) expect(output).not.to.contain(token);
    await stack?.stop();
  });

  it('create prints the webhook and its secret once, list shows the webhooks without secrets, delete removes one; text and --json', async () => {
    const made = await runChat(['webhooks', 'create', 'https://bot.example/hooks/chat'], { env });
    expect(made.code, made.stderr).to.equal(0);
    const [header, secretLine] = made.stdout.split('\n');
    const webhookId = header!.split(/\s+/)[0]!;
    expect(header).to.match(/^[0-7][0-9A-HJKMNP-TV-Z]{25}\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+https:\/\/bot\.example\/hooks\/chat$/);
    expect(secretLine).to.match(/^secret\s+[A-Za-z0-9_-]{43}$/);
    expect(made.stderr).to.contain('not shown again');

    const given = jsonLines<CreateWebhookResponse>(await runChat(['webhooks', 'create', 'https://bot.example/other', '--secret', 'sixteen-or-more-chars', '--json'], { env }), 'CreateWebhookResponse');
    expect(given).to.have.length(1);
    expect(given[0]!.secret).to.equal('sixteen-or-more-chars');

    const listed = jsonLines<Webhook>(await runChat(['webhooks', 'list', '--json'], { env }), 'Webhook');
    expect(listed.map((w) => w.webhookId)).to.deep.equal([webhookId, given[0]!.webhook.webhookId]);
    const text = await runChat(['webhooks', 'list'], { env });
    expect(text.stdout.split('\n').filter(Boolean).map((l) => l.split(/\s+/)[0])).to.deep.equal([webhookId, given[0]!.webhook.webhookId]);
    expect(text.stdout).not.to.contain('sixteen-or-more-chars').and.not.to.contain(secretLine!.split(/\s+/)[1]!);

    const deleted = await runChat(['webhooks', 'delete', webhookId], { env });
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect(deleted.stdout).to.equal(`deleted webhook ${webhookId}\n`);
    expectApiError(await runChat(['webhooks', 'delete', webhookId], { env }), 'RESOURCE_NOT_FOUND');
    const deletedJson = await runChat(['webhooks', 'delete', given[0]!.webhook.webhookId, '--json'], { env });
    expect(JSON.parse(deletedJson.stdout)).to.deep.equal({ webhookId: given[0]!.webhook.webhookId, deleted: true });
    const none = await runChat(['webhooks', 'list'], { env });
    expect(none).to.deep.include({ code: 0, stdout: '' });
    expect(none.stderr).to.contain('no webhooks');
  });

  it('refuses a URL the service will not send to (exit 1, saying why), and usage mistakes (exit 2); --help on every command', async () => {
    for (const [url, reason] of [
      ['https://10.0.0.5/hook', 'private, loopback or link-local'],
      ['http://bot.example/hook', 'https'],
      ['https://user:pw@bot.example/hook', 'credentials'],
    ] as const) {
      const run = await runChat(['webhooks', 'create', url], { env });
      expectApiError(run, 'REQUEST_INVALID');
      expect(run.stderr, url).to.contain(reason);
    }
    expectApiError(await runChat(['webhooks', 'create', 'https://bot.example/hook', '--secret', 'short'], { env }), 'REQUEST_INVALID');
    const usage: Array<[string[], RegExp]> = [
      [['webhooks', 'create'], /receiver-url/],
      [['webhooks', 'delete'], /webhook-id/],
      [['webhooks', 'dead-letters', 'X', '--all', '--limit', '2'], /--all and --limit exclude each other/],
      [['webhooks', 'dead-letters', 'X', '--limit', '0'], /--limit must be a positive integer/],
      [['webhooks', 'redeliver', 'X', ...Array.from({ length: 101 }, (_, i) => ['--delivery', `d${i}`]).flat()], /at most 100 --delivery/],
      [['webhooks', 'list', '--repository', 'X'], /unknown option '--repository'/],
    ];
    for (const [args, message] of usage) {
      const run = await runChat(args, { env });
      expect({ args: args.slice(0, 4), code: run.code }).to.deep.equal({ args: args.slice(0, 4), code: 2 });
      expect(run.stderr, args.join(' ')).to.match(message);
    }
    for (const command of [['webhooks'], ['webhooks', 'create'], ['webhooks', 'list'], ['webhooks', 'delete'], ['webhooks', 'dead-letters'], ['webhooks', 'redeliver']]) {
      const run = await runChat([...command, '--help'], { env: {} });
      expect(run.code, command.join(' ')).to.equal(0);
      expect(run.stdout).to.match(/^Usage: chat webhooks/);
      if (command.length > 1) expect(run.stdout, command.join(' ')).to.contain('--token-file').and.contain('--json').and.not.contain('--repository');
    }
    expect((await runChat(['--help'], { env: {} })).stdout).to.contain('webhooks');
  });

  it('dead-letters lists a delivery that failed, redeliver sends it again under the same delivery ID, and the dead letter is gone once it is delivered', async () => {
    const url = await receiver.start();
    const created = jsonLines<CreateWebhookResponse>(await runChat(['webhooks', 'create', url, '--json'], { env }), 'CreateWebhookResponse')[0]!;
    const { webhookId } = created.webhook;
    const empty = await runChat(['webhooks', 'dead-letters', webhookId], { env });
    expect(empty).to.deep.include({ code: 0, stdout: '' });
    expect(empty.stderr).to.contain('no dead letters');

    // The appender bot mentions the reading bot, whose webhook this is; the receiver answers 500.
    const mention = await stack.api.append<MessageResponse>({ repositoryId: scenario.repositoryId }, await actors.appendBot(), mentionBody(scenario.bots.reader.id, 1));
    expectStatus(mention, 201);
    const letters = await eventually('a dead letter', async () => {
      const listed = jsonLines<WebhookDeadLetter>(await runChat(['webhooks', 'dead-letters', webhookId, '--json'], { env }), 'WebhookDeadLetter');
      return listed.length > 0 ? listed : undefined;
    });
    expect(letters).to.have.length(1);
    const [letter] = letters;
    expect(letter).to.deep.include({ state: 'dead', attempts: 1, lastError: 'the receiver answered 500' });
    expect(letter!.notification).to.deep.include({ messageId: mention.body.messageId, repositoryId: scenario.repositoryId, targetId: scenario.bots.reader.id });
    // What arrived is a genuine delivery of that notification, signed with the secret create printed.
    const first = receiver.received[0]!;
    const delivery = await verifyWebhook({ headers: first.headers, body: first.body }, { secret: created.secret });
    expect(delivery).to.deep.include({ deliveryId: letter!.deliveryId, event: 'notification', webhookId });
    expect(delivery.notification.messageId).to.equal(mention.body.messageId);

    const text = await runChat(['webhooks', 'dead-letters', webhookId], { env });
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.contain(`dead  ${letter!.deliveryId}`).and.contain('1 attempts, last: the receiver answered 500');
    expect(text.stdout).to.contain(`bot ${scenario.bots.appender.id} mentioned ${scenario.bots.reader.id} in repository room of repository ${scenario.repositoryId}`);

    receiver.status = 200;
    const received = receiver.received.length;
    const redelivered = await runChat(['webhooks', 'redeliver', webhookId, '--delivery', letter!.deliveryId], { env });
    expect(redelivered.code, redelivered.stderr).to.equal(0);
    expect(redelivered.stdout).to.equal(`redelivering ${letter!.deliveryId}\n`);
    await eventually('the redelivery', async () => (receiver.received.length > received ? true : undefined));
    const again = receiver.received.at(-1)!;
    expect(again.headers['x-chat-delivery']).to.equal(letter!.deliveryId);
    expect((await verifyWebhook({ headers: again.headers, body: again.body }, { secret: created.secret })).notification.notificationId).to.equal(letter!.notification.notificationId);
    await eventually('the dead letter to go', async () => ((await runChat(['webhooks', 'dead-letters', webhookId], { env })).stdout === '' ? true : undefined));

    const nothing = await runChat(['webhooks', 'redeliver', webhookId, '--json'], { env });
    expect(jsonLines<RedeliverWebhookResponse>(nothing, 'RedeliverWebhookResponse')).to.deep.equal([{ redelivering: [] }]);
    expect(nothing.stderr).to.contain('no dead letters to redeliver');
  });
});
