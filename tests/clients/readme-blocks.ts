import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testConfig } from '../harness/test-config.ts';

/** The fenced blocks of the README's "Use it" section, in order, with their language. */
export function useItBlocks(): Array<{ lang: string; code: string }> {
  const readme = readFileSync(join(testConfig.repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Use it\n');
  if (start < 0) throw new Error('README.md has no "Use it" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}
