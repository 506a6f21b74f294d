/** The process's streams and environment, passed in so the CLI can be run and tested as a function. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Registers the handler of Ctrl-C and SIGTERM for a following command; returns its removal. */
  onInterrupt(handler: () => void): () => void;
}
