/** One output stream of a program: the first `max` bytes kept, the rest read (so the program never blocks) and dropped. */
export class OutputSink {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  truncated = false;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    const room = this.max - this.#kept;
    if (room <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    if (part.length < chunk.length) this.truncated = true;
    // A copy: the stream may reuse its buffer.
    this.#chunks.push(Buffer.from(part));
    this.#kept += part.length;
  }

  bytes(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.#chunks));
  }
}
