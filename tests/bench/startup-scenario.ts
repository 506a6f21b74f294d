/**
 * `startup`: how long each process of the compiled build takes from spawn to its first successful
 * readiness probe (admin /readyz; dev-core /healthz; the all-in-one GET /v1/openapi.json), started
 * as the image starts it: `node dist/<entry>.js` in the package folder of the built workspace.
 * Every service runs `runs` times after one warm-up start (the install and the build in the page
 * cache: a warm install; the all-in-one's embedded database created, and kept for the measured
 * starts: the warm-up start's figure is printed as the first start). The CPU the process used until
 * ready, read from /proc, is printed next to the wall time, since the wall time also counts waiting
 * for a shared, busy machine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPILED_SERVICES, sharedDependencies, startCompiled, type CompiledService } from '../build/compiled-services.ts';
import { testConfig } from '../harness/test-config.ts';
import { cpuMs } from './proc-stats.ts';
import { percentile, round } from './stats.ts';

export interface StartupFigure {
  name: string;
  value: string;
  target: string;
  note?: string;
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

export async function measureStartup(options: { quick: boolean }): Promise<StartupFigure[]> {
  const runs = options.quick ? 2 : 5;
  const shared = await sharedDependencies('bench_startup');
  const folder = (spec: CompiledService) => join(testConfig.repoRoot, spec.packageDir);
  const devCoreSpec = COMPILED_SERVICES.find((s) => s.name === 'dev-core')!;
  // The distributed services need a core to talk to; this one is not measured.
  const core = await startCompiled(devCoreSpec, folder(devCoreSpec), {});
  const env = { ...shared.env, CORE_URL: core.url };
  const figures: StartupFigure[] = [];
  const dataDir = await mkdtemp(join(tmpdir(), 'chat-bench-startup-'));
  try {
    for (const spec of COMPILED_SERVICES) {
      const samples: Sample[] = [];
      let first: Sample | undefined;
      for (let run = 0; run <= runs; run++) {
        const started = await startCompiled(spec, folder(spec), env, { dataDir });
        const sample = { wallMs: started.readyMs, cpuMs: await cpuMs(started.service.pid!) };
        await started.service.stop();
        if (run === 0) first = sample;
        else samples.push(sample);
      }
      const wall = samples.map((s) => s.wallMs);
      const cpu = samples.map((s) => s.cpuMs);
      figures.push({
        name: `startup to ready, ${spec.name} (node ${spec.packageDir}/${spec.entry})`,
        value: `median ${round(percentile(wall, 50), 0)} ms, max ${round(Math.max(...wall), 0)} ms over ${runs} starts`,
        target: '≤ 2,000 ms',
        note: `CPU until ready: median ${round(percentile(cpu, 50), 0)} ms; first start ${round(first!.wallMs, 0)} ms (CPU ${round(first!.cpuMs, 0)} ms)`,
      });
    }
  } finally {
    await core.service.stop();
    await shared.release();
    await rm(dataDir, { recursive: true, force: true });
  }
  return figures;
}
