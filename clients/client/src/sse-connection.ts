import { SseParser, type SseEvent } from './sse-parser.ts';

/** The connection went silent for longer than the allowed gap; it is treated as dead. */
export class SilenceTimeout extends Error {
  override name = 'SilenceTimeout';
}

/**
 * One open text/event-stream response, read only when the consumer asks for the next event. Reading
 * on demand means a slow handler holds back the socket (and the server sees the backpressure), and the
 * silence timer runs only while the consumer waits for bytes, never while its handler works.
 */
export class SseConnection {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private readonly parser: SseParser;
  private readonly queue: SseEvent[] = [];
  private silent = false;

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly controller: AbortController,
    private readonly silenceMs: number,
    private readonly dispose: () => void = () => undefined,
  ) {
    this.reader = body.getReader();
    this.parser = new SseParser({ onEvent: (event) => this.queue.push(event) });
  }

  /**
   * The next event, or `null` when the server ended the stream. Throws {@link SilenceTimeout} after
   * `silenceMs` without a byte, and the transport's error when the connection breaks.
   */
  async next(): Promise<SseEvent | null> {
    while (this.queue.length === 0) {
      const timer = setTimeout(() => {
        this.silent = true;
        this.controller.abort(new SilenceTimeout(`no bytes for ${this.silenceMs} ms`));
      }, this.silenceMs);
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await this.reader.read();
      } catch (error) {
        if (this.silent) throw new SilenceTimeout(`no bytes for ${this.silenceMs} ms`, { cause: error });
        throw error;
      } finally {
        clearTimeout(timer);
      }
      if (chunk.done) {
        // A final event without its blank line is incomplete by definition and is discarded.
        return null;
      }
      this.parser.feed(this.decoder.decode(chunk.value, { stream: true }));
    }
    return this.queue.shift() as SseEvent;
  }

  /** Drops the connection; safe to call more than once. */
  close(): void {
    this.dispose();
    this.controller.abort();
    this.reader.cancel().catch(() => undefined);
  }
}
