import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessagePageResponse, MessageResponse } from '@chat/contracts';
import { ulid } from 'ulid';
import { expectStatus } from '../harness/assertions.ts';
import { freePort } from '../harness/free-port.ts';
import { OpenApiValidator } from '../harness/openapi-validator.ts';
import { MODES, sharedStack, type Actors, type Stack } from '../harness/stacks.ts';
import type { Scenario } from '../harness/fixture-factory.ts';
import { CHAT_BIN, ChatFollower, runChat, seenOutput, type ChatRun } from './cli-process.ts';

const validator = new OpenApiValidator();
const ESC = '\u001b';

/** Each line of `--json` output is one object valid against `component`. */
function jsonLines<T>(run: ChatRun, component: string): T[] {
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

for (const mode of MODES) {
  describe(`[${mode}] the chat CLI (built, as a child process)`, function () {
    this.timeout(180_000);
    let stack: Stack;
    let scenario: Scenario;
    let actors: Actors;
    let env: Record<string, string>;
    let tokens: string[];
    let dir: string;
    const repo = () => ['--repository', scenario.repositoryId];

    before(async () => {
      stack = await sharedStack(mode);
      ({ scenario, actors } = await stack.scenario());
      tokens = await Promise.all([actors.writer(), actors.reader(), actors.appendBot(), actors.coreResource()]);
      env = { CHAT_URL: stack.chat.url, CHAT_TOKEN: await actors.writer() };
      dir = mkdtempSync(join(tmpdir(), 'chat-cli-'));
    });

    after(() => {
      rmSync(dir, { recursive: true, force: true });
      // Never printed, in any run of any command of this file.
      for (const output of seenOutput) for (const token of tokens) expect(output.includes(token)).to.equal(false);
    });

    it('room: readable metadata, and --json one RoomResponse (repository and branch room)', async () => {
      const readable = await runChat(['room', ...repo()], { env });
      expect(readable.code, readable.stderr).to.equal(0);
      expect(readable.stdout).to.match(/repository:\s+/).and.contain(scenario.repositoryId).and.match(/persisted:\s+false/);
      const json = await runChat(['room', ...repo(), '--branch', scenario.branchId, '--json'], { env });
      expect(json.code, json.stderr).to.equal(0);
      const [room] = jsonLines<{ kind: string; branchId: string }>(json, 'RoomResponse');
      expect(room).to.include({ kind: 'branch', branchId: scenario.branchId });
    });

    it('post: body from the argument and from stdin (one trailing line feed dropped), --json is the stored message, --idempotency-key replays', async () => {
      const fromArg = await runChat(['post', ...repo(), 'hello from the *CLI*', '--json'], { env });
      expect(fromArg.code, fromArg.stderr).to.equal(0);
      const [message] = jsonLines<MessageResponse>(fromArg, 'MessageResponse');
      expect(message!.bodyMarkdown).to.equal('hello from the *CLI*');
      const piped = await runChat(['post', ...repo(), '--json'], { env, input: 'line one\nline two\n' });
      expect(jsonLines<MessageResponse>(piped, 'MessageResponse')[0]!.bodyMarkdown).to.equal('line one\nline two');
      const blankKept = await runChat(['post', ...repo(), '--json'], { env, input: 'ends with a blank line\n\n' });
      expect(jsonLines<MessageResponse>(blankKept, 'MessageResponse')[0]!.bodyMarkdown).to.equal('ends with a blank line\n');

      const key = ulid();
      const first = await runChat(['post', ...repo(), 'once', '--idempotency-key', key], { env });
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout).to.match(/^posted /);
      const again = await runChat(['post', ...repo(), 'once', '--idempotency-key', key], { env });
      expect(again.code, again.stderr).to.equal(0);
      expect(again.stdout).to.match(/^already posted with this key /);
      expectApiError(await runChat(['post', ...repo(), 'different', '--idempotency-key', key], { env }), 'IDEMPOTENCY_KEY_REUSED');
      const list = await stack.api.list<MessagePageResponse>({ repositoryId: scenario.repositoryId }, await actors.reader(), 'limit=200');
      expect(list.body.items.filter((m) => m.idempotencyKey === key)).to.have.length(1);
    });

    it('post --mention binds @IDs (a human mention with the core credential from --core-token-file)', async () => {
      const coreFile = join(dir, 'core-token');
      writeFileSync(coreFile, `${await actors.coreResource()}\n`, { mode: 0o600 });
      const body = `ping @${scenario.users.reader} and @${scenario.bots.appender.id}`;
      const run = await runChat(
        ['post', ...repo(), body, '--mention', `human:${scenario.users.reader}`, '--mention', `bot:${scenario.bots.appender.id}`, '--core-token-file', coreFile, '--json'],
        { env },
      );
      expect(run.code, run.stderr).to.equal(0);
      const [message] = jsonLines<MessageResponse>(run, 'MessageResponse');
      const bytes = Buffer.from(body, 'utf8');
      expect(message!.mentions!.map((m) => bytes.subarray(m.startByte, m.endByte).toString('utf8'))).to.deep.equal([`@${scenario.users.reader}`, `@${scenario.bots.appender.id}`]);
      const required = await runChat(['post', ...repo(), `hi @${scenario.users.reader}`, '--mention', `human:${scenario.users.reader}`], { env });
      expectApiError(required, 'CORE_RESOURCE_TOKEN_REQUIRED');
      expect(required.stderr).to.contain('pass --core-token-file PATH or set CHAT_CORE_TOKEN').and.not.match(/X-Service-Core-Authorization/i);
    });

    it('every token option takes the bare token: a core token file in header form works too; a refused one is named by its flag, not by a header', async () => {
      const headerForm = join(dir, 'core-token-header-form');
      writeFileSync(headerForm, `Bearer ${await actors.coreResource()}\n`, { mode: 0o600 });
      const body = `hello @${scenario.users.reader}`;
      const mention = ['--mention', `human:${scenario.users.reader}`];
      const accepted = await runChat(['post', ...repo(), body, ...mention, '--core-token-file', headerForm], { env });
      expect(accepted.code, accepted.stderr).to.equal(0);
      const expired = join(dir, 'core-token-expired');
      writeFileSync(expired, await stack.core.mintToken({ type: 'core_resource', subjectId: scenario.users.writer, expiresInSeconds: -60 }), { mode: 0o600 });
      const refused = await runChat(['post', ...repo(), body, ...mention, '--core-token-file', expired], { env });
      expectApiError(refused, 'CORE_RESOURCE_TOKEN_REJECTED');
      expect(refused.stderr).to.contain('the core resource credential from --core-token-file was refused').and.not.match(/X-Service-Core-Authorization/i);
      const fromEnv = await runChat(['post', ...repo(), body, ...mention], { env: { ...env, CHAT_CORE_TOKEN: 'not.a.token' } });
      expect(fromEnv.stderr).to.contain('the core resource credential in CHAT_CORE_TOKEN was refused');
    });

    it('a refused token ends a command and a tail with exit 1 and says where the token came from and what to do', async () => {
      const expired = await stack.core.mintToken({ type: 'human', subjectId: scenario.users.reader, expiresInSeconds: -60 });
      const fixed = await runChat(['messages', ...repo()], { env: { CHAT_URL: stack.chat.url, CHAT_TOKEN: expired } });
      expectApiError(fixed, 'TOKEN_REJECTED');
      expect(fixed.stderr).to.contain(`the service at ${stack.chat.url} refused the token in CHAT_TOKEN (TOKEN_REJECTED)`).and.contain('give a fresh token');
      const tail = await runChat(['tail', ...repo()], { env: { CHAT_URL: stack.chat.url, CHAT_TOKEN: expired } });
      expectApiError(tail, 'TOKEN_REJECTED');
      expect(tail.stderr).to.contain('refused the token in CHAT_TOKEN').and.not.match(/\n\s+at /);
      const file = join(dir, 'expired-token');
      writeFileSync(file, expired, { mode: 0o600 });
      const fromFile = await runChat(['inbox', 'tail', ...repo(), '--from-start', '--token-file', file], { env: { CHAT_URL: stack.chat.url } });
      expectApiError(fromFile, 'TOKEN_REJECTED');
      expect(fromFile.stderr).to.contain('refused the token from --token-file (read again after the refusal)');
      const fromEnvFile = await runChat(['room', ...repo()], { env: { CHAT_URL: stack.chat.url, CHAT_TOKEN_FILE: file } });
      expectApiError(fromEnvFile, 'TOKEN_REJECTED');
      expect(fromEnvFile.stderr).to.contain('refused the token from CHAT_TOKEN_FILE (read again after the refusal)');
    });

    it('a tail whose token expires goes on with the token its --token-file holds by then', async () => {
      const { scenario: own, actors: ownActors } = await stack.scenario();
      const scope = { repositoryId: own.repositoryId };
      const file = join(dir, 'renewed-token');
      writeFileSync(file, await stack.core.mintToken({ type: 'human', subjectId: own.users.reader, expiresInSeconds: 8 }), { mode: 0o600 });
      const tail = new ChatFollower(['tail', '--repository', own.repositoryId, '--token-file', file], { env: { CHAT_URL: stack.chat.url } });
      expectStatus(await stack.api.append(scope, await ownActors.writer(), { bodyMarkdown: 'while the first token lives' }), 201);
      await tail.waitForLines(/^ {2}while the first token lives$/, 1);
      writeFileSync(file, await stack.core.mintToken({ type: 'human', subjectId: own.users.reader, expiresInSeconds: 3600 }), { mode: 0o600 });
      await new Promise((r) => setTimeout(r, 9_000));
      expectStatus(await stack.api.append(scope, await ownActors.writer(), { bodyMarkdown: 'after it expired' }), 201);
      await tail.waitForLines(/^ {2}after it expired$/, 1);
      const stopped = await tail.stop('SIGINT');
      expect(stopped.code, stopped.stderr).to.equal(0);
    });

    it('no token over plain http to a host that is not loopback, unless --allow-insecure-http or CHAT_ALLOW_INSECURE_HTTP=1', async () => {
      // 0.0.0.0 is not a loopback address, yet on Linux a connection to it reaches this machine's service.
      const anyAddress = stack.chat.url.replace('127.0.0.1', '0.0.0.0');
      const refused = await runChat(['room', ...repo(), '--url', anyAddress], { env });
      expect(refused.code, refused.stderr).to.equal(2);
      expect(refused.stderr).to.contain(`refusing to send the token over plain http to ${anyAddress}`).and.contain('--allow-insecure-http');
      const byFlag = await runChat(['room', ...repo(), '--url', anyAddress, '--allow-insecure-http'], { env });
      expect(byFlag.code, byFlag.stderr).to.equal(0);
      const byEnv = await runChat(['room', ...repo(), '--url', anyAddress], { env: { ...env, CHAT_ALLOW_INSECURE_HTTP: '1' } });
      expect(byEnv.code, byEnv.stderr).to.equal(0);
      for (const loopback of [stack.chat.url, stack.chat.url.replace('127.0.0.1', 'localhost')]) {
        expect((await runChat(['room', ...repo(), '--url', loopback], { env })).code).to.equal(0);
      }
    });

    it('a service that does not answer: exit 1 naming the base URL tried', async () => {
      const closed = `http://127.0.0.1:${await freePort()}`;
      const run = await runChat(['room', ...repo()], { env: { ...env, CHAT_URL: closed } });
      expect(run.code, run.stderr).to.equal(1);
      expect(run.stderr).to.match(new RegExp(`^chat: cannot reach the service at ${closed}: no answer to GET \\S+ after 5 attempts`, 'm'));
    });

    it('messages: --limit, the resume hint and --after, --all across pages, branch rooms', async () => {
      const { scenario: own, actors: ownActors } = await stack.scenario();
      const writer = await ownActors.writer();
      const scope = { repositoryId: own.repositoryId };
      // 203 messages: more than the API's largest page, so --all must follow nextCursor.
      for (let i = 0; i < 203; i += 1) expectStatus(await stack.api.append(scope, writer, { bodyMarkdown: `m${i}` }), 201);
      const ownEnv = { CHAT_URL: stack.chat.url, CHAT_TOKEN: await ownActors.reader() };
      const first = await runChat(['messages', '--repository', own.repositoryId, '--limit', '3', '--json'], { env: ownEnv });
      expect(first.code, first.stderr).to.equal(0);
      expect(jsonLines<MessageResponse>(first, 'MessageResponse').map((m) => m.bodyMarkdown)).to.deep.equal(['m0', 'm1', 'm2']);
      const after = /--after (\S+)/.exec(first.stderr)?.[1];
      expect(after, first.stderr).to.be.a('string');
      const next = await runChat(['messages', '--repository', own.repositoryId, '--limit', '2', '--after', after!, '--json'], { env: ownEnv });
      expect(jsonLines<MessageResponse>(next, 'MessageResponse').map((m) => m.bodyMarkdown)).to.deep.equal(['m3', 'm4']);
      const all = await runChat(['messages', '--repository', own.repositoryId, '--all', '--json'], { env: ownEnv });
      expect(all.code, all.stderr).to.equal(0);
      expect(jsonLines<MessageResponse>(all, 'MessageResponse').map((m) => m.bodyMarkdown)).to.deep.equal(Array.from({ length: 203 }, (_, i) => `m${i}`));
      expect(all.stderr).to.not.contain('--after');
      const readable = await runChat(['messages', '--repository', own.repositoryId, '--limit', '1'], { env: ownEnv });
      expect(readable.stdout).to.match(new RegExp(`${own.users.writer}\\s+[0-9A-Z]{26}\\n  m0\\n$`));

      expectStatus(await stack.api.append({ ...scope, branchId: own.branchId }, writer, { bodyMarkdown: 'on the branch' }), 201);
      const branch = await runChat(['messages', '--repository', own.repositoryId, '--branch', own.branchId, '--json'], { env: ownEnv });
      expect(jsonLines<MessageResponse>(branch, 'MessageResponse').map((m) => m.bodyMarkdown)).to.deep.equal(['on the branch']);
    });

    it('prints bodyMarkdown as inert text: escape sequences, C1 controls and bidi overrides made visible, no HTML', async () => {
      const hostile = `**bold** <b>x</b> ${ESC}[2J${ESC}]0;owned\u0007 \u009b31m \u202Eevil\rover deadbeefcafe`;
      const posted = await stack.api.append<MessageResponse>({ repositoryId: scenario.repositoryId, branchId: scenario.branchId }, await actors.writer(), { bodyMarkdown: hostile });
      expectStatus(posted, 201);
      const run = await runChat(['messages', ...repo(), '--branch', scenario.branchId, '--limit', '200'], { env });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.not.match(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E]/);
      expect(run.stdout).to.contain('**bold** <b>x</b> \\x1B[2J\\x1B]0;owned\\x07 \\x9B31m \\u202Eevil\\x0Dover deadbeefcafe');
      expect(run.stdout).to.not.contain('<strong>');
      const json = await runChat(['messages', ...repo(), '--branch', scenario.branchId, '--limit', '200', '--json'], { env });
      expect(json.stdout).to.not.match(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E]/);
      expect(jsonLines<MessageResponse>(json, 'MessageResponse').map((m) => m.bodyMarkdown)).to.include(hostile);
    });

    it('colour only on a terminal: ANSI styles under a pseudo-terminal, none with NO_COLOR, none when piped', async () => {
      const command = (extra: string) => `${extra} ${JSON.stringify(process.execPath)} ${JSON.stringify(CHAT_BIN)} room --repository ${scenario.repositoryId}`;
      const underTty = (extra: string) =>
        execFileSync('script', ['-qec', command(extra), '/dev/null'], { env: { PATH: process.env.PATH ?? '', ...env, TERM: 'xterm' }, encoding: 'utf8' });
      expect(underTty('')).to.contain(`${ESC}[`);
      expect(underTty('NO_COLOR=1')).to.not.contain(ESC);
      const piped = await runChat(['room', ...repo()], { env: { ...env, TERM: 'xterm' } });
      expect(piped.stdout).to.not.contain(ESC);
    });

    it('exit code 1 with the code and request ID on stderr for API errors', async () => {
      const outsider = { CHAT_URL: stack.chat.url, CHAT_TOKEN: await actors.outsider() };
      expectApiError(await runChat(['room', ...repo()], { env: outsider }), 'AUTHORIZATION_DENIED');
      expectApiError(await runChat(['messages', ...repo()], { env: { ...env, CHAT_TOKEN: 'not-a-token' } }), 'TOKEN_REJECTED');
      expectApiError(await runChat(['messages', ...repo(), '--after', 'AAAA'], { env }), 'CURSOR_INVALID');
      expectApiError(await runChat(['post', '--repository', scenario.archivedRepositoryId, 'late'], { env }), 'ROOM_SEALED');
    });

    it('exit code 2 for usage errors, each with a message on stderr', async () => {
      const cases: Array<[string[], Record<string, string>, RegExp]> = [
        [['room', ...repo(), '--bogus'], env, /unknown option/],
        [['room'], env, /no repository/],
        [['room', '--repository', 'not-a-ulid'], env, /canonical ULID/],
        [['room', ...repo(), '--token', 'abc'], env, /--token is not accepted/],
        [['room', ...repo()], { CHAT_URL: stack.chat.url }, /no token/],
        [['room', ...repo(), '--token-file', join(dir, 'missing')], { CHAT_URL: stack.chat.url }, /cannot read the token file/],
        [['messages', ...repo(), '--limit', '0'], env, /positive integer/],
        [['messages', ...repo(), '--limit', '2', '--all'], env, /exclude each other/],
        [['post', ...repo(), 'x @b', '--mention', 'bot:c'], env, /no free @c/],
        [['inbox', 'list', ...repo(), '--branch', scenario.branchId], env, /unknown option '--branch'/],
        [['inbox', 'list', ...repo(), '--all-repositories'], env, /--all-repositories and --repository exclude each other/],
        [['nonsense'], env, /unknown command/],
        [[], env, /Usage: chat/],
      ];
      for (const [args, runEnv, message] of cases) {
        const run = await runChat(args, { env: runEnv });
        expect({ args, code: run.code }).to.deep.equal({ args, code: 2 });
        expect(run.stderr, args.join(' ')).to.match(message);
      }
    });

    it('--help on every command exits 0 and lists the connection options', async () => {
      for (const command of [[], ['room'], ['messages'], ['post'], ['tail'], ['inbox'], ['inbox', 'list'], ['inbox', 'tail'], ['inbox', 'ack'], ['search']]) {
        const run = await runChat([...command, '--help'], { env: {} });
        expect(run.code, command.join(' ')).to.equal(0);
        expect(run.stdout).to.match(/^Usage: chat/);
        if (command.length > 0 && command.join(' ') !== 'inbox') expect(run.stdout, command.join(' ')).to.contain('--token-file').and.contain('--json').and.not.contain('--token <');
      }
    });

    it('--token-file: the token is read from the file, never seen in argv or output', async () => {
      const tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, `${await actors.reader()}\n`, { mode: 0o600 });
      const follower = new ChatFollower(['tail', ...repo(), '--token-file', tokenFile], { env: { CHAT_URL: stack.chat.url } });
      await new Promise((r) => setTimeout(r, 1500));
      const argv = readFileSync(`/proc/${follower.child.pid}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${follower.child.pid}/environ`, 'utf8');
      const run = await follower.stop('SIGINT');
      expect(argv).to.contain(tokenFile);
      expect(argv.includes(await actors.reader())).to.equal(false);
      expect(environ.includes(await actors.reader())).to.equal(false);
      expect(run.code, run.stderr).to.equal(0);
    });

    it('tail follows the room live; Ctrl-C prints the cursor, and --after resumes with nothing lost or repeated', async () => {
      const { scenario: own, actors: ownActors } = await stack.scenario();
      const writer = await ownActors.writer();
      const scope = { repositoryId: own.repositoryId };
      const ownEnv = { CHAT_URL: stack.chat.url, CHAT_TOKEN: await ownActors.reader() };
      expectStatus(await stack.api.append(scope, writer, { bodyMarkdown: 'before the tail' }), 201);
      const tail = new ChatFollower(['tail', '--repository', own.repositoryId, '--json'], { env: ownEnv });
      await tail.waitForLines(/before the tail/, 1);
      for (let i = 0; i < 3; i += 1) expectStatus(await stack.api.append(scope, writer, { bodyMarkdown: `live ${i}` }), 201);
      await tail.waitForLines(/live \d/, 3);
      const stopped = await tail.stop('SIGINT');
      expect(stopped.code, stopped.stderr).to.equal(0);
      const resume = /resume with: chat tail --repository \S+ --after (\S+)/.exec(stopped.stderr)?.[1];
      expect(resume, stopped.stderr).to.be.a('string');
      expect(jsonLines<MessageResponse>(stopped, 'MessageResponse').map((m) => m.bodyMarkdown)).to.deep.equal(['before the tail', 'live 0', 'live 1', 'live 2']);

      for (let i = 3; i < 5; i += 1) expectStatus(await stack.api.append(scope, writer, { bodyMarkdown: `live ${i}` }), 201);
      const resumed = new ChatFollower(['tail', '--repository', own.repositoryId, '--after', resume!], { env: ownEnv });
      await resumed.waitForLines(/^  live \d$/, 2);
      expectStatus(await stack.api.append(scope, writer, { bodyMarkdown: 'live 5' }), 201);
      await resumed.waitForLines(/^  live \d$/, 3);
      const second = await resumed.stop('SIGTERM');
      expect(second.code, second.stderr).to.equal(0);
      expect(second.stdout.split('\n').filter((l) => l.startsWith('  '))).to.deep.equal(['  live 3', '  live 4', '  live 5']);
    });

    it('inbox list, tail and ack: unacknowledged mentions, the checkpoint, compare-and-set', async () => {
      const { scenario: own, actors: ownActors } = await stack.scenario();
      const scope = { repositoryId: own.repositoryId };
      const target = own.users.reader;
      const mention = async (text: string) => {
        const body = `${text} @${target}`;
        const start = Buffer.byteLength(`${text} `);
        const res = await stack.api.append<MessageResponse>(scope, await ownActors.writer(), { bodyMarkdown: body, mentions: [{ principalKind: 'human', principalId: target, startByte: start, endByte: start + target.length + 1 }] }, { coreAuthorization: `Bearer ${await ownActors.coreResource()}` });
        expectStatus(res, 201);
        return res.body;
      };
      const readerEnv = { CHAT_URL: stack.chat.url, CHAT_TOKEN: await ownActors.reader() };
      const inbox = ['--repository', own.repositoryId];
      const tail = new ChatFollower(['inbox', 'tail', ...inbox, '--json'], { env: readerEnv });
      const first = await mention('one');
      const second = await mention('two');
      await tail.waitForLines(/"notificationId"/, 2);
      const tailed = await tail.stop('SIGINT');
      expect(tailed.code, tailed.stderr).to.equal(0);
      expect(jsonLines<{ messageId: string }>(tailed, 'NotificationResponse').map((n) => n.messageId)).to.deep.equal([first.messageId, second.messageId]);
      expect(tailed.stderr).to.match(/resume with: chat inbox tail --repository \S+ --after \S+/);

      const listed = await runChat(['inbox', 'list', ...inbox, '--json'], { env: readerEnv });
      const notifications = jsonLines<{ cursor: string; acknowledged: boolean }>(listed, 'NotificationResponse');
      expect(notifications.map((n) => n.acknowledged)).to.deep.equal([false, false]);
      expect(listed.stderr).to.contain('nothing acknowledged yet');
      const readable = await runChat(['inbox', 'list', ...inbox], { env: readerEnv });
      expect(readable.stdout.match(/^● /gm)).to.have.length(2);
      // Each notification shows its message's first line.
      expect(readable.stdout.split('\n').filter((l) => /^ {4}(one|two) @/.test(l))).to.deep.equal([`    one @${target}`, `    two @${target}`]);

      const ackFirst = await runChat(['inbox', 'ack', ...inbox, notifications[0]!.cursor, '--json'], { env: readerEnv });
      expect(ackFirst.code, ackFirst.stderr).to.equal(0);
      expect(jsonLines(ackFirst, 'AcknowledgeInboxResponse')).to.deep.equal([{ acknowledgedCursor: notifications[0]!.cursor, replayed: false }]);
      // The checkpoint moved: expecting the old one (none) is stale.
      const stale = await runChat(['inbox', 'ack', ...inbox, notifications[1]!.cursor, '--expected', notifications[1]!.cursor], { env: readerEnv });
      expectApiError(stale, 'INBOX_CHECKPOINT_STALE');
      // inbox tail starts at the checkpoint: only the second notification is new.
      const fromCheckpoint = new ChatFollower(['inbox', 'tail', ...inbox, '--json'], { env: readerEnv });
      await fromCheckpoint.waitForLines(/"notificationId"/, 1);
      await new Promise((r) => setTimeout(r, 500));
      const fromCheckpointRun = await fromCheckpoint.stop('SIGINT');
      expect(jsonLines<{ messageId: string }>(fromCheckpointRun, 'NotificationResponse').map((n) => n.messageId)).to.deep.equal([second.messageId]);

      const ackNewest = await runChat(['inbox', 'ack', ...inbox], { env: readerEnv });
      expect(ackNewest.code, ackNewest.stderr).to.equal(0);
      expect(ackNewest.stdout).to.equal(`acknowledged through ${notifications[1]!.cursor}\n`);
      const nothing = await runChat(['inbox', 'ack', ...inbox], { env: readerEnv });
      expect(nothing.code).to.equal(0);
      expect(nothing.stderr).to.contain('nothing to acknowledge');
      const after = jsonLines<{ acknowledged: boolean }>(await runChat(['inbox', 'list', ...inbox, '--json'], { env: readerEnv }), 'NotificationResponse');
      expect(after.map((n) => n.acknowledged)).to.deep.equal([true, true]);
    });

    it('inbox list, tail and ack --all-repositories: the mentions of every repository the caller reads, in one inbox', async () => {
      const [a, b] = [await stack.scenario(), await stack.scenario()];
      const target = a.scenario.users.reader;
      // The person reads a second repository too.
      await stack.fixture.updateRepository(b.scenario.repositoryId, (repository) => {
        repository.members[target] = 'read';
      });
      const mention = async (own: typeof a, text: string) => {
        const body = `${text} @${target}`;
        const start = Buffer.byteLength(`${text} `);
        const res = await stack.api.append<MessageResponse>({ repositoryId: own.scenario.repositoryId }, await own.actors.writer(), { bodyMarkdown: body, mentions: [{ principalKind: 'human', principalId: target, startByte: start, endByte: start + target.length + 1 }] }, { coreAuthorization: `Bearer ${await own.actors.coreResource()}` });
        expectStatus(res, 201);
        return res.body;
      };
      const readerEnv = { CHAT_URL: stack.chat.url, CHAT_TOKEN: await a.actors.reader() };
      const all = ['--all-repositories'];
      const tail = new ChatFollower(['inbox', 'tail', ...all, '--json'], { env: readerEnv });
      const first = await mention(a, 'one');
      const second = await mention(b, 'two');
      await tail.waitForLines(/"notificationId"/, 2);
      const tailed = await tail.stop('SIGINT');
      expect(tailed.code, tailed.stderr).to.equal(0);
      expect(jsonLines<{ messageId: string }>(tailed, 'NotificationResponse').map((n) => n.messageId)).to.deep.equal([first.messageId, second.messageId]);
      expect(tailed.stderr).to.match(/resume with: chat inbox tail --all-repositories --after \S+/);

      const listed = jsonLines<{ repositoryId: string; acknowledged: boolean }>(await runChat(['inbox', 'list', ...all, '--json'], { env: readerEnv }), 'NotificationResponse');
      expect(listed.map((n) => [n.repositoryId, n.acknowledged])).to.deep.equal([
        [a.scenario.repositoryId, false],
        [b.scenario.repositoryId, false],
      ]);
      const readable = await runChat(['inbox', 'list', ...all], { env: readerEnv });
      expect(readable.stdout.split('\n').filter((l) => /^ {4}(one|two) @/.test(l))).to.deep.equal([`    one @${target}`, `    two @${target}`]);

      // Through the newest: the feed's checkpoint, and with it each repository inbox's.
      const ackNewest = await runChat(['inbox', 'ack', ...all], { env: readerEnv });
      expect(ackNewest.code, ackNewest.stderr).to.equal(0);
      expect(ackNewest.stdout).to.match(/^acknowledged through \S+\n$/);
      const nothing = await runChat(['inbox', 'ack', ...all], { env: readerEnv });
      expect(nothing.stderr).to.contain('nothing to acknowledge');
      const after = jsonLines<{ acknowledged: boolean }>(await runChat(['inbox', 'list', ...all, '--json'], { env: readerEnv }), 'NotificationResponse');
      expect(after.map((n) => n.acknowledged)).to.deep.equal([true, true]);
      const inB = jsonLines<{ acknowledged: boolean }>(await runChat(['inbox', 'list', '--repository', b.scenario.repositoryId, '--json'], { env: readerEnv }), 'NotificationResponse');
      expect(inB.map((n) => n.acknowledged)).to.deep.equal([true]);
      // The tail starts after the checkpoint: a new mention is all it shows.
      const fromCheckpoint = new ChatFollower(['inbox', 'tail', ...all, '--json'], { env: readerEnv });
      await new Promise((r) => setTimeout(r, 500));
      const third = await mention(b, 'three');
      await fromCheckpoint.waitForLines(/"notificationId"/, 1);
      const fromCheckpointRun = await fromCheckpoint.stop('SIGINT');
      expect(jsonLines<{ messageId: string }>(fromCheckpointRun, 'NotificationResponse').map((n) => n.messageId)).to.deep.equal([third.messageId]);
    });
  });
}
