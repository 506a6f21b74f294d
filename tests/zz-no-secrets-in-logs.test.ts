/**
 * Reliability test 17: after the whole run (mocha loads spec files sorted, so this file comes last),
 * no token minted during the run appears in the output of any process the run started.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { MINTED_TOKENS_FILE, RUN_LOG_DIR } from './harness/child-service.ts';

/** What a leak looks like: the whole token, or one of its segments that identify it. */
function needlesOf(token: string): Array<{ what: string; text: string }> {
  const [, payload, signature] = token.split('.');
  const needles = [{ what: 'token', text: token }];
  // Only segments long enough to be the token's own (a JWT payload or signature, not a stray word).
  if (payload && payload.length >= 16) needles.push({ what: 'payload segment', text: payload });
  if (signature && signature.length >= 16) needles.push({ what: 'signature segment', text: signature });
  return needles;
}

describe('reliability test 17: no secret in the logs of the test run', () => {
  it('finds none of the tokens minted during the run in any child process output', function () {
    this.timeout(120_000);
    const tokens = existsSync(MINTED_TOKENS_FILE) ? [...new Set(readFileSync(MINTED_TOKENS_FILE, 'utf8').split('\n').filter(Boolean))] : [];
    const logFiles = existsSync(RUN_LOG_DIR) ? readdirSync(RUN_LOG_DIR).filter((f) => f.endsWith('.log')) : [];
    const logs = logFiles.map((file) => ({ file, text: readFileSync(join(RUN_LOG_DIR, file), 'utf8') }));
    const bytes = logs.reduce((sum, l) => sum + Buffer.byteLength(l.text), 0);
    const lines = logs.reduce((sum, l) => sum + l.text.split('\n').filter(Boolean).length, 0);

    const found: string[] = [];
    for (const token of tokens) {
      for (const needle of needlesOf(token)) {
        for (const log of logs) {
          const at = log.text.indexOf(needle.text);
          if (at < 0) continue;
          const lineStart = log.text.lastIndexOf('\n', at) + 1;
          const lineEnd = log.text.indexOf('\n', at);
          found.push(`${needle.what} of a minted token in ${log.file}: ${log.text.slice(lineStart, lineEnd < 0 ? undefined : lineEnd).slice(0, 400)}`);
        }
      }
    }
    // Reported on every run, so a reviewer sees the check had something to look at.
    process.stdout.write(`      searched ${logs.length} process logs (${lines} lines, ${bytes} bytes) in ${RUN_LOG_DIR} for ${tokens.length} minted tokens: ${found.length} found\n`);

    expect(tokens.length, 'tokens minted during the run (none means this check is vacuous)').to.be.greaterThan(0);
    expect(logs.length, 'child process logs of the run').to.be.greaterThan(0);
    expect(lines, 'log lines written during the run').to.be.greaterThan(0);
    expect(found, found.join('\n')).to.deep.equal([]);
  });
});
