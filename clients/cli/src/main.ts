/** Entry point of the `chat` command (bin/chat.js loads the compiled form of this file). */
import type { CliIo } from './cli-io.ts';
import { runCli } from './run-cli.ts';

const io: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  onInterrupt(handler) {
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    return () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    };
  },
};

process.exitCode = await runCli(process.argv, io);
