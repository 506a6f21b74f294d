const CRLF = '\r\n';

/**
 * One SSE frame as bytes, in the two forms a response may need: as is, and as one chunk of chunked
 * transfer encoding (`<hex length>\r\n<frame>\r\n`). A frame shared by every stream of a room is
 * built once per event; each form is made on first use and then written by every stream as is.
 */
export class EncodedFrame {
  private chunked: Buffer | undefined;

  constructor(
    /** The frame's UTF-8 bytes (never empty: an empty chunk would end the response). */
    readonly bytes: Buffer,
  ) {}

  /** The frame framed as one chunk. */
  get chunk(): Buffer {
    this.chunked ??= chunkOf(this.bytes);
    return this.chunked;
  }
}

/** `bytes` framed as one chunk of chunked transfer encoding, in one buffer. */
export function chunkOf(bytes: Buffer): Buffer {
  const head = bytes.length.toString(16) + CRLF;
  const out = Buffer.allocUnsafe(head.length + bytes.length + 2);
  out.write(head, 0, 'latin1');
  bytes.copy(out, head.length);
  out.write(CRLF, head.length + bytes.length, 'latin1');
  return out;
}

/** A frame made for one stream (a heartbeat, a replayed item) as the bytes to write. */
export function encodeFrame(frame: string, chunked: boolean): Buffer {
  const bytes = Buffer.from(frame, 'utf8');
  return chunked ? chunkOf(bytes) : bytes;
}
