#!/usr/bin/env node
// The installed `chat` command runs the compiled CLI; until `pnpm build` has made it, say so plainly.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('chat: the CLI is not built yet; run `pnpm build` in the repository first\n');
  process.exit(2);
}
await import(main.href);
