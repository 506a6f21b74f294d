/**
 * Nchan's side of the shared harness's fan-out scenarios, run from here so that its publish body
 * can be sized: the harness's own scripts (`ours/side-by-side*.sh`) publish Nchan's default body
 * (`--size 200`, 226 bytes as sent), and take no setting for it. The scenario flags are theirs.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The harness's flags per scenario, as `ours/side-by-side.sh` passes them to `sse-fanout.mjs` for Nchan. */
export const NCHAN_FANOUT_FLAGS: Record<string, string[]> = {
  a50: ['--subs', '1000', '--channels', '1', '--messages', '500', '--rate', '50', '--sample', '50'],
  a100: ['--subs', '1000', '--channels', '1', '--messages', '1000', '--rate', '100', '--sample', '50'],
  c: ['--subs', '2000', '--channels', '1000', '--messages', '5000', '--rate', '500', '--sample', '400'],
};

/** Nchan's shared instance (port 9080, prefix /tmp/nchan-bench) is used by one run at a time. */
export const NCHAN_LOCK = '/tmp/nchan-bench.lock';

/**
 * Restarts the harness's throw-away Nchan, runs one fan-out scenario against it with a publish body
 * of about `bodyBytes` (the harness pads `{pad}` up to `--size`), stops it, and writes the output to
 * `outFile` as the harness names its result files. Returns the scenario's RESULT_JSON, or undefined
 * when it printed none.
 */
export async function runNchanFanout(harness: string, scenario: keyof typeof NCHAN_FANOUT_FLAGS, bodyBytes: number, outFile: string): Promise<Record<string, unknown> | undefined> {
  const nchan = join(harness, 'peers/nchan.sh');
  const flags = [...NCHAN_FANOUT_FLAGS[scenario]!, '--size', String(bodyBytes), '--src-ips', '127.0.0.2-127.0.0.9', '--label', `${scenario}-${bodyBytes}B`, '--max-seconds', '120'];
  const script = [
    'ulimit -n 20000',
    `"${nchan}" restart >/dev/null; sleep 1`,
    `echo "# nchan; $(date -u +%FT%TZ); load: $(cut -d' ' -f1-3 /proc/loadavg)"`,
    `node "${join(harness, 'sse-fanout.mjs')}" --sub 'http://127.0.0.1:9080/sub?id={ch}' --pub 'http://127.0.0.1:9080/pub?id={ch}' ${flags.join(' ')} --pid-tree "$("${nchan}" pid)"`,
    'echo "rc=$?"',
    `"${nchan}" stop`,
  ].join('\n');
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn('flock', [NCHAN_LOCK, 'bash', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(text));
  });
  await writeFile(outFile, output);
  const json = /^RESULT_JSON (.*)$/m.exec(output)?.[1];
  return json ? (JSON.parse(json) as Record<string, unknown>) : undefined;
}

/** Nchan's server CPU per delivery in a scenario's result (nginx master and workers), µs. */
export async function nchanCpuPerDelivery(resultFile: string): Promise<number | undefined> {
  const json = /^RESULT_JSON (.*)$/m.exec(await readFile(resultFile, 'utf8').catch(() => ''))?.[1];
  const value = json ? (JSON.parse(json) as { server?: { cpuUsPerDelivery?: unknown } }).server?.cpuUsPerDelivery : undefined;
  return typeof value === 'number' ? value : undefined;
}
