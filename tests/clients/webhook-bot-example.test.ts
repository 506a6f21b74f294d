import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { ChatClient, mentionBindingAt, type MessageResponse, type NotificationResponse } from '@chat/client';
import { ulid } from 'ulid';
import { ChildService } from '../harness/child-service.ts';
import { freePort } from '../harness/free-port.ts';
import { sharedStack, type Stack } from '../harness/stacks.ts';
import { testConfig } from '../harness/test-config.ts';

/** The demo repository of dev-core's bundled fixture, which `pnpm start` serves, and its demo bot. */
const DEMO_REPOSITORY_ID = '01JGFJJZ00QNYBVPQTAT49MN0F';
const BOT = { id: 'b_ci', credentialId: 'c_1' };
const SCRIPT = 'examples/webhook-bot/src/main.ts';

/** The messages of the demo repository room the bot posted, newest first. */
async function botReplies(client: ChatClient): Promise<MessageResponse[]> {
  const replies: MessageResponse[] = [];
  let seen = 0;
  for await (const message of client.roomMessagesBackward({ repositoryId: DEMO_REPOSITORY_ID })) {
    if (message.senderId === BOT.id) replies.push(message);
    if (++seen >= 400) break;
  }
  return replies;
}

/** A delivery signed as the service signs one (node:crypto, apart from the SDK's WebCrypto verifier). */
function signedDelivery(secret: string, webhookId: string, notification: NotificationResponse, deliveryId = `${webhookId}.${notification.notificationId}`) {
  const body = JSON.stringify({ deliveryId, event: 'notification', webhookId, notification });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-chat-delivery': deliveryId,
      'x-chat-event': 'notification',
      'x-chat-timestamp': timestamp,
      'x-chat-signature-256': `sha256=${signature}`,
    },
  };
}

describe('[embedded] examples/webhook-bot against the all-in-one with its demo fixture', function () {
  this.timeout(180_000);
  let stack: Stack;
  let botClient: ChatClient;
  let alice: ChatClient;

  before(async () => {
    stack = await sharedStack('embedded');
    botClient = new ChatClient({ baseUrl: stack.chat.url, token: await stack.core.mintToken({ type: 'bot', subjectId: BOT.id, credentialId: BOT.credentialId }) });
    alice = new ChatClient({ baseUrl: stack.chat.url, token: await stack.core.mintToken({ type: 'human', subjectId: 'u_alice' }) });
  });

  it('registers its webhook at start, replies once in the room to a mention the service delivers, and removes its webhook on SIGTERM with exit 0', async () => {
    const port = await freePort();
    const bot = new ChildService({ name: 'webhook-bot', script: SCRIPT, env: { CHAT_URL: stack.chat.url, CHAT_CORE_URL: stack.core.url, WEBHOOK_BOT_PORT: String(port) } });
    try {
      const [, webhookId] = await bot.waitForOutput(/registered webhook (\S+) at http:\/\/127\.0\.0\.1:\d+\/hook for this run/, 60_000);
      await bot.waitForOutput(/replying to every mention/);
      expect((await botClient.listWebhooks()).map((w) => w.webhookId)).to.include(webhookId);

      const body = `hello @${BOT.id} ${ulid()}`;
      const coreResourceToken = await stack.core.mintToken({ type: 'core_resource', subjectId: 'u_alice' });
      const { message: mention } = await alice.appendMessage(
        { repositoryId: DEMO_REPOSITORY_ID },
        { bodyMarkdown: body, mentions: [mentionBindingAt(body, body.indexOf('@'), { principalKind: 'bot', principalId: BOT.id })] },
        { coreResourceToken },
      );
      const [, deliveryId, replyId] = await bot.waitForOutput(new RegExp(`replied to (${webhookId}\\.\\S+) in repository ${DEMO_REPOSITORY_ID}: message (\\S+)`), 60_000);
      const replies = await botReplies(alice);
      const reply = replies.find((m) => m.messageId === replyId);
      expect(reply, bot.log).to.not.equal(undefined);
      expect(reply!.bodyMarkdown).to.equal('got your mention by webhook, u_alice');
      expect(reply!.createdAt >= mention.createdAt).to.equal(true);
      expect(bot.log.match(new RegExp(`replied to ${deliveryId!.replace('.', '\\.')}`, 'g'))).to.have.length(1);

      await bot.stop(30_000);
      expect(bot.process.exitCode, bot.log).to.equal(0);
      expect(bot.log).to.contain(`removed webhook ${webhookId}`).and.contain('webhook-bot: stopped');
      expect((await botClient.listWebhooks()).map((w) => w.webhookId)).not.to.include(webhookId);
    } finally {
      await bot.stop();
    }
  });

  it('with WEBHOOK_SECRET keeps its webhook, answers a delivery that comes again 200 at once, refuses a forged one, and after a restart replies to a redelivery with the reply it stored', async () => {
    const port = await freePort();
    const secret = `webhook-bot-test-${ulid()}`;
    const url = `http://127.0.0.1:${port}/hook`;
    const env = { CHAT_URL: stack.chat.url, CHAT_CORE_URL: stack.core.url, WEBHOOK_BOT_PORT: String(port), WEBHOOK_URL: url, WEBHOOK_SECRET: secret };
    const start = async (name: string) => {
      const bot = new ChildService({ name, script: SCRIPT, env });
      await bot.waitForOutput(/replying to every mention/, 60_000);
      return bot;
    };
    let bot = await start('webhook-bot-secret');
    let webhookId: string | undefined;
    try {
      [, webhookId] = (await bot.waitForOutput(/registered webhook (\S+) at /))!;
      const notification: NotificationResponse = {
        notificationId: ulid(),
        targetKind: 'bot',
        targetId: BOT.id,
        repositoryId: DEMO_REPOSITORY_ID,
        roomId: ulid(),
        messageId: ulid(),
        senderKind: 'user',
        senderId: 'u_carol',
        spans: [{ startByte: 0, endByte: 5 }],
        createdAt: new Date().toISOString(),
        branchId: null,
        cursor: 'opaque',
        acknowledged: false,
      };
      const post = (delivery: { body: string; headers: Record<string, string> }) => fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      const delivery = signedDelivery(secret, webhookId!, notification);
      expect((await post(delivery)).status).to.equal(200);
      const [, replyId] = await bot.waitForOutput(/replied to \S+ in repository \S+: message (\S+)/);
      // The same delivery again (a retry after a lost answer): 200 at once, nothing posted.
      expect((await post(delivery)).status).to.equal(200);
      await bot.waitForOutput(/was acted on already: answered 200/);
      // Forged: another secret, or the body changed under the signature.
      expect((await post(signedDelivery('not the secret at all', webhookId!, notification))).status).to.equal(401);
      expect((await post({ ...delivery, body: delivery.body.replace('u_carol', 'u_mallory') })).status).to.equal(401);
      expect((await fetch(url)).status).to.equal(405);

      // A restart forgets the delivery IDs it saw; the redelivery finds the reply stored under its key.
      await bot.stop(30_000);
      expect(bot.process.exitCode, bot.log).to.equal(0);
      expect(bot.log).not.to.contain('removed webhook');
      bot = await start('webhook-bot-secret-restarted');
      expect(bot.log).to.contain(`receiving on webhook ${webhookId}`);
      expect((await post(signedDelivery(secret, webhookId!, notification))).status).to.equal(200);
      await bot.waitForOutput(new RegExp(`had replied to \\S+ in repository \\S+: message ${replyId}`));
      // One reply in all: u_carol is mentioned by this test only.
      const replies = (await botReplies(alice)).filter((m) => m.bodyMarkdown === 'got your mention by webhook, u_carol');
      expect(replies.map((m) => m.messageId)).to.deep.equal([replyId]);
    } finally {
      await bot.stop();
      if (webhookId) await botClient.deleteWebhook(webhookId).catch(() => undefined);
    }
  });

  it('--help names every variable it reads', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT, '--help'], { cwd: testConfig.repoRoot, encoding: 'utf8' });
    expect(run.status, run.stderr).to.equal(0);
    for (const name of ['CHAT_URL', 'CHAT_CORE_URL', 'CHAT_TOKEN_FILE', 'CHAT_TOKEN', 'CHAT_ALLOW_INSECURE_HTTP', 'WEBHOOK_BOT_HOST', 'WEBHOOK_BOT_PORT', 'WEBHOOK_URL', 'WEBHOOK_SECRET']) {
      expect(run.stdout).to.contain(name);
    }
  });
});
