/**
 * Reads the repository's Dockerfile as far as the image's contents depend on it: the build stage's
 * `pnpm ... deploy` command, the runtime stage's COPY instructions and its default WORKDIR and CMD.
 * No Docker engine runs here, so the image-contents test runs that deploy command itself and applies
 * these COPY rules to its output.
 */
import { readFileSync } from 'node:fs';

export interface DockerInstruction {
  keyword: string;
  args: string;
}

export interface DockerStage {
  name: string;
  instructions: DockerInstruction[];
}

/** A `COPY --from=<stage> <source> <destination>` of the runtime stage. */
export interface StageCopy {
  from: string;
  source: string;
  destination: string;
}

export interface DockerfilePlan {
  /** The deploy command's arguments after `pnpm`, target directory last. */
  deployArgs: string[];
  /** Directory the deploy command writes (inside the build stage). */
  deployTarget: string;
  /** The runtime stage's COPY instructions, in order. */
  copies: StageCopy[];
  /** The runtime stage's last WORKDIR and its CMD. */
  workdir: string;
  cmd: string[];
}

/** Splits a Dockerfile into stages of instructions (continuation lines joined, comments dropped). */
export function parseDockerfile(text: string): DockerStage[] {
  const lines = text.split('\n').filter((line) => !/^\s*#/.test(line));
  const logical = lines.join('\n').replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter(Boolean);
  const stages: DockerStage[] = [];
  for (const line of logical) {
    const [, keyword, args] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!keyword || args === undefined) throw new Error(`unreadable Dockerfile line: ${line}`);
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const name = /\bAS\s+(\S+)$/i.exec(args)?.[1] ?? String(stages.length);
      stages.push({ name, instructions: [] });
    } else if (upper !== 'ARG' || stages.length > 0) {
      if (stages.length === 0) throw new Error(`${upper} before the first FROM`);
      stages.at(-1)!.instructions.push({ keyword: upper, args });
    }
  }
  return stages;
}

/** What the image holds and runs, from the Dockerfile; throws when its shape is not the expected one. */
export function readDockerfilePlan(path: string): DockerfilePlan {
  const stages = parseDockerfile(readFileSync(path, 'utf8'));
  const runtime = stages.at(-1);
  if (!runtime || stages.length < 2) throw new Error('the Dockerfile needs a build stage and a runtime stage');

  const copies: StageCopy[] = [];
  for (const { keyword, args } of runtime.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')) {
    const from = /--from=(\S+)/.exec(args)?.[1];
    const paths = args.split(/\s+/).filter((a) => !a.startsWith('--'));
    if (keyword === 'ADD' || !from || paths.length !== 2) {
      throw new Error(`runtime stage: ${keyword} ${args}: only COPY --from=<stage> <one source> <destination> is understood`);
    }
    copies.push({ from, source: paths[0]!, destination: paths[1]! });
  }

  const deploys = stages.flatMap((stage) =>
    stage.instructions
      .filter((i) => i.keyword === 'RUN' && /\bpnpm\b.*\bdeploy\b/.test(i.args))
      .map((i) => ({ stage: stage.name, command: i.args.replace(/--mount=\S+/g, '').trim() })),
  );
  if (deploys.length !== 1) throw new Error(`expected one \`pnpm deploy\` RUN, found ${deploys.length}`);
  const { command } = deploys[0]!;
  if (/[;&|$`<>]/.test(command)) throw new Error(`the deploy RUN must be one plain command: ${command}`);
  const words = command.split(/\s+/);
  if (words[0] !== 'pnpm') throw new Error(`the deploy RUN must start with pnpm: ${command}`);
  const deployArgs = words.slice(1).map((w) => w.replace(/^"(.*)"$/, '$1'));
  const deployTarget = deployArgs.at(-1)!;
  if (!deployTarget.startsWith('/')) throw new Error(`the deploy target must be an absolute path: ${command}`);

  const workdir = runtime.instructions.filter((i) => i.keyword === 'WORKDIR').at(-1)?.args;
  const cmdArgs = runtime.instructions.filter((i) => i.keyword === 'CMD').at(-1)?.args;
  if (!workdir || !cmdArgs) throw new Error('the runtime stage needs a WORKDIR and a CMD');
  const cmd = JSON.parse(cmdArgs) as string[];
  return { deployArgs, deployTarget, copies, workdir, cmd };
}
