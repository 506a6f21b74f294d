import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import type { MessageResponse, SearchResult } from '@chat/contracts';
import { ulid } from 'ulid';
import { expectStatus } from '../harness/assertions.ts';
import { OpenApiValidator } from '../harness/openapi-validator.ts';
import { MODES, sharedStack, type Actors, type Stack } from '../harness/stacks.ts';
import type { Scenario } from '../harness/fixture-factory.ts';
import { CHAT_BIN, runChat, seenOutput, type ChatRun } from './cli-process.ts';

const validator = new OpenApiValidator();
const ESC = '\u001b';

/** Each line of `--json` output is one SearchResult valid against the OpenAPI document. */
function results(run: ChatRun): SearchResult[] {
  expect(run.code, run.stderr).to.equal(0);
  return run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const value = JSON.parse(line) as SearchResult;
      expect(validator.schemaProblems('SearchResult', value), line).to.deep.equal([]);
      return value;
    });
}

const ids = (items: SearchResult[]) => items.map((r) => r.message.messageId);

function expectApiError(run: ChatRun, code: string): void {
  expect(run.code, run.stderr).to.equal(1);
  expect(run.stderr).to.contain(code);
  expect(run.stderr).to.match(/request ID: [A-Za-z0-9._:-]+/);
}

for (const mode of MODES) {
  describe(`[${mode}] chat search (the built CLI, as a child process)`, function () {
    this.timeout(180_000);
    let stack: Stack;
    let scenario: Scenario;
    let actors: Actors;
    let env: Record<string, string>;
    let marker: string;
    /** Oldest first: two in the repository room, three in the branch room. */
    let appended: MessageResponse[];
    const repo = () => ['--repository', scenario.repositoryId];

    before(async () => {
      stack = await sharedStack(mode);
      ({ scenario, actors } = await stack.scenario());
      env = { CHAT_URL: stack.chat.url, CHAT_TOKEN: await actors.reader() };
      marker = `marker_${ulid().toLowerCase()}`;
      const writer = await actors.writer();
      const bodies: Array<[{ repositoryId: string; branchId?: string }, string]> = [
        [{ repositoryId: scenario.repositoryId }, `first ${marker} in the repository room`],
        [{ repositoryId: scenario.repositoryId, branchId: scenario.branchId }, `the branch says ${marker}\nacross two lines`],
        [{ repositoryId: scenario.repositoryId, branchId: scenario.branchId }, `${'x'.repeat(100)} ${marker} \`parseConfig\` ${ESC}[2J${'y'.repeat(100)}`],
        [{ repositoryId: scenario.repositoryId }, `second ${marker} in the repository room`],
        [{ repositoryId: scenario.repositoryId, branchId: scenario.branchId }, `last ${marker}`],
      ];
      appended = [];
      for (const [room, bodyMarkdown] of bodies) {
        const res = await stack.api.append<MessageResponse>(room, writer, { bodyMarkdown });
        expectStatus(res, 201);
        appended.push(res.body);
      }
    });

    after(async () => {
      // Never printed, in any run of this file.
      const tokens = await Promise.all([actors.reader(), actors.outsider()]);
      for (const output of seenOutput) for (const token of tokens) expect(output.includes(token)).to.equal(false);
    });

    it('text: per result its time, room, sender and message ID, each fragment on a line with the match in [brackets], and the cursor that chat messages reads on from', async () => {
      const run = await runChat(['search', marker, ...repo(), '--order', 'newest'], { env: { ...env, TERM: 'xterm' } });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout, 'no escape sequence when stdout is not a terminal').to.not.contain(ESC);
      const headers = run.stdout.split('\n').filter((l) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  /.test(l));
      const rooms = [...appended].reverse().map((m) => (m.branchId ? `branch ${m.branchId}` : 'repository room'));
      expect(headers).to.deep.equal([...appended].reverse().map((m, i) => `${m.createdAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')}  ${rooms[i]}  ${scenario.users.writer}  ${m.messageId}`));
      const lines = run.stdout.split('\n');
      expect(lines).to.include(`    last [${marker}]`);
      // A line break of the body is a space in its fragment; a fragment cut out of a long body says so.
      expect(lines).to.include(`    the branch says [${marker}] across two lines`);
      const cut = lines.find((l) => l.includes('`parseConfig`'))!;
      expect(cut).to.match(new RegExp(`^ {4}…x+ \\[${marker}\\] \`parseConfig\` \\\\x1B\\[2Jy+…$`));
      const cursors = lines.filter((l) => l.startsWith('    cursor ')).map((l) => l.slice('    cursor '.length));
      expect(cursors).to.have.length(5);

      // A result's cursor is its message's position in its room: chat messages reads on from it.
      const second = appended[3]!;
      const after = await runChat(['messages', ...repo(), '--after', cursors[1]!, '--json'], { env });
      expect(after.code, after.stderr).to.equal(0);
      expect(after.stdout).to.equal('');
      const fromFirst = await runChat(['messages', ...repo(), '--after', cursors[4]!, '--json'], { env });
      expect(fromFirst.stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as MessageResponse).messageId)).to.deep.equal([second.messageId]);
    });

    it('matches in bold under a terminal, and in brackets with NO_COLOR', () => {
      const command = (extra: string) => `${extra} ${JSON.stringify(process.execPath)} ${JSON.stringify(CHAT_BIN)} search 'last ${marker}' --repository ${scenario.repositoryId}`;
      const underTty = (extra: string) => execFileSync('script', ['-qec', command(extra), '/dev/null'], { env: { PATH: process.env.PATH ?? '', ...env, TERM: 'xterm' }, encoding: 'utf8' });
      const coloured = underTty('');
      expect(coloured).to.contain(`${ESC}[1m${marker}${ESC}[22m`).and.contain(`${ESC}[1mlast${ESC}[22m`);
      const plain = underTty('NO_COLOR=1');
      expect(plain).to.not.contain(ESC);
      expect(plain).to.contain(`[last] [${marker}]`);
    });

    it('--json: one SearchResult a line; the whole repository, --branch one branch room, --room-only the repository room', async () => {
      const newest = [...appended].reverse();
      const whole = results(await runChat(['search', marker, ...repo(), '--order', 'newest', '--json'], { env }));
      expect(ids(whole)).to.deep.equal(newest.map((m) => m.messageId));
      const branch = results(await runChat(['search', marker, ...repo(), '--branch', scenario.branchId, '--order', 'newest', '--json'], { env }));
      expect(ids(branch)).to.deep.equal(newest.filter((m) => m.branchId === scenario.branchId).map((m) => m.messageId));
      expect(branch.every((r) => r.branchId === scenario.branchId)).to.equal(true);
      const roomOnly = results(await runChat(['search', marker, ...repo(), '--room-only', '--order', 'newest', '--json'], { env }));
      expect(ids(roomOnly)).to.deep.equal(newest.filter((m) => !m.branchId).map((m) => m.messageId));
      // A filter narrows, and relevance (the default) puts the short message with the word alone first.
      const filtered = results(await runChat(['search', `${marker} has:code`, ...repo(), '--json'], { env }));
      expect(ids(filtered)).to.deep.equal([appended[2]!.messageId]);
      const relevance = results(await runChat(['search', marker, ...repo(), '--json'], { env }));
      expect(ids(relevance)[0]).to.equal(appended[4]!.messageId);
    });

    it('--limit stops early and prints the command that goes on; it walks the rest with no repeat and no gap', async () => {
      const first = await runChat(['search', `${marker} the`, ...repo(), '--order', 'newest', '--limit', '2', '--json'], { env });
      const seen = ids(results(first));
      const hint = /^more: chat search (.+) --after (\S+)$/m.exec(first.stderr);
      expect(hint, first.stderr).to.not.equal(null);
      expect(hint![1]).to.equal(`'${marker} the' --repository ${scenario.repositoryId} --order newest`);
      const rest = await runChat(['search', `${marker} the`, ...repo(), '--order', 'newest', '--after', hint![2]!, '--json'], { env });
      seen.push(...ids(results(rest)));
      expect(rest.stderr).to.not.contain('more:');
      const withThe = [...appended].reverse().filter((m) => /the/i.test(m.bodyMarkdown));
      expect(withThe).to.have.length(3);
      expect(seen).to.deep.equal(withThe.map((m) => m.messageId));
    });

    it('nothing found: exit 0, nothing on stdout, a note on stderr', async () => {
      const run = await runChat(['search', `${marker}_absent`, ...repo()], { env });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.contain('no message matches');
    });

    it('API errors exit 1 with the code and request ID; usage errors exit 2', async () => {
      expectApiError(await runChat(['search', '', ...repo()], { env }), 'REQUEST_INVALID');
      expectApiError(await runChat(['search', `${marker} in:repository`, ...repo(), '--room-only'], { env }), 'REQUEST_INVALID');
      expectApiError(await runChat(['search', marker, ...repo(), '--after', 'forged'], { env }), 'CURSOR_INVALID');
      expectApiError(await runChat(['search', marker, ...repo()], { env: { ...env, CHAT_TOKEN: await actors.outsider() } }), 'AUTHORIZATION_DENIED');
      const usage: Array<[string[], RegExp]> = [
        [['search', marker, ...repo(), '--branch', scenario.branchId, '--room-only'], /--branch and --room-only exclude each other/],
        [['search', marker, ...repo(), '--order', 'oldest'], /--order.*relevance.*newest/],
        [['search', marker, ...repo(), '--limit', '0'], /positive integer/],
        [['search', ...repo()], /missing required argument 'query'/],
        [['search', marker], /no repository/],
      ];
      for (const [args, message] of usage) {
        const run = await runChat(args, { env });
        expect({ args, code: run.code }).to.deep.equal({ args, code: 2 });
        expect(run.stderr, args.join(' ')).to.match(message);
      }
    });

    it('--help names the options, the query language and how a result is shown', async () => {
      const run = await runChat(['search', '--help'], { env: {} });
      expect(run.code).to.equal(0);
      expect(run.stdout).to.match(/^Usage: chat search \[options\] <query>/);
      for (const text of ['--branch', '--room-only', '--order', '--limit', '--after', '--json', '--token-file', 'from:', 'has:code', '[brackets]']) expect(run.stdout).to.contain(text);
      expect((await runChat(['--help'], { env: {} })).stdout).to.match(/^ {2}search \[options\] <query>/m);
    });
  });
}
