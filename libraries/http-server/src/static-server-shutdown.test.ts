import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';

const shutdownModule = new URL('./static-server-shutdown.ts', import.meta.url).href;
const limitsModule = new URL('./http-server-limits.ts', import.meta.url).href;

// stopOnSignals ends the process, so it runs in a child that reports each step on stdout.
const child = `
const { stopOnSignals } = await import(${JSON.stringify(shutdownModule)});
const { createLimitedServer } = await import(${JSON.stringify(limitsModule)});
const server = createLimitedServer((_req, res) => res.end()).listen(0, '127.0.0.1');
server.on('close', () => console.log('server closed'));
const admin = { close: async () => console.log('admin closed') };
const isDraining = stopOnSignals({ server, admin: () => admin, logger: { info: (obj, msg) => console.log(msg, obj.signal) } });
server.on('listening', () => console.log('draining', isDraining()));
`;

describe('stopOnSignals', () => {
  it('on SIGTERM closes the public server, then the admin server, and exits 0', async function () {
    this.timeout(30_000);
    const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output === 'draining false\n') proc.kill('SIGTERM');
    });
    const [code] = await once(proc, 'exit');
    expect(code).to.equal(0);
    expect(output.split('\n')).to.deep.equal(['draining false', 'stopping SIGTERM', 'server closed', 'admin closed', '']);
  });
});
