/** One dispatched server-sent event. */
export interface SseEvent {
  /** The `event` field, `message` when the event had none (the HTML standard's default). */
  event: string;
  /** The `data` lines joined with LF. */
  data: string;
  /** The last event ID buffer at dispatch: this event's `id`, or the most recent one before it. */
  lastEventId: string;
  /** True when this event's own lines set `id` (a NUL-free value), so `lastEventId` belongs to it. */
  hasId: boolean;
}

/** Callbacks of {@link SseParser}. */
interface SseParserHandlers {
  onEvent: (event: SseEvent) => void;
  /** A `:` comment line, without the colon. */
  onComment?: (text: string) => void;
  /** A valid `retry` field, in milliseconds. */
  onRetry?: (ms: number) => void;
}

const LF = 10;
const CR = 13;

/**
 * The event-stream interpretation algorithm of the HTML standard ("Server-sent events", 9.2.6),
 * fed decoded text in arbitrary chunks: lines end in CRLF, LF or CR (a CR at the end of a chunk
 * waits to see whether LF follows); `data` lines join with LF and the final LF is dropped; an `id`
 * containing NUL is ignored; comments and unknown fields are skipped; an event with no data is not
 * dispatched; a trailing event without its blank line is discarded at end of stream.
 */
export class SseParser {
  private buffer = '';
  private skipLeadingLf = false;
  private sawFirstChunk = false;
  private eventType = '';
  private data = '';
  private dataSeen = false;
  private lastEventId = '';
  private idSetHere = false;

  constructor(private readonly handlers: SseParserHandlers) {}

  /** Feeds the next decoded chunk. */
  feed(chunk: string): void {
    let text = chunk;
    if (!this.sawFirstChunk && text.length > 0) {
      this.sawFirstChunk = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLeadingLf && text.length > 0) {
      this.skipLeadingLf = false;
      if (text.charCodeAt(0) === LF) text = text.slice(1);
    }
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i += 1) {
      const code = this.buffer.charCodeAt(i);
      if (code !== LF && code !== CR) continue;
      this.line(this.buffer.slice(start, i));
      if (code === CR) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === LF) i += 1;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.charCodeAt(0) === 0x3a) return this.handlers.onComment?.(line.slice(1));
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data += `${value}\n`;
        this.dataSeen = true;
        break;
      case 'id':
        if (!value.includes('\0')) {
          this.lastEventId = value;
          this.idSetHere = true;
        }
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.handlers.onRetry?.(Number(value));
        break;
      default:
        break;
    }
  }

  private dispatch(): void {
    const hasId = this.idSetHere;
    this.idSetHere = false;
    if (!this.dataSeen) {
      this.eventType = '';
      return;
    }
    const event: SseEvent = { event: this.eventType || 'message', data: this.data.slice(0, -1), lastEventId: this.lastEventId, hasId };
    this.eventType = '';
    this.data = '';
    this.dataSeen = false;
    this.handlers.onEvent(event);
  }
}
