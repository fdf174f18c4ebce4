/**
 * Counts the bytes pdf.js decodes from a document's streams (FlateDecode, LZW, Brotli, …)
 * and stops a document past a limit: a 4 MB file can inflate to gigabytes, and pdf.js keeps
 * every decoded stream whole in memory. pdf.js decodes in two ways, and both are metered:
 *
 * - Natively, through the global DecompressionStream (Flate and Brotli streams of content,
 *   fonts and the like): replaced by one that counts each chunk as it is produced and fails
 *   the stream past the limit, so inflation stops there. pdf.js then falls back to its own
 *   decoder, which the second hook stops at its first block.
 * - In JavaScript, in pdf.js's private DecodeStream classes. Each one's constructor assigns
 *   `_rawMinBufferLength` (pdf.worker.mjs, class DecodeStream), so a setter for that one
 *   name on Object.prototype sees every decoding stream as it is built and patches its
 *   class once: buffer growth (`ensureBuffer`) is checked before it allocates, and every
 *   `readBlock` is refused past the limit and counted after it runs (decoders that fill
 *   their buffer at once, such as Brotli's, bypass ensureBuffer).
 *
 * pdf.js swallows most errors inside a page and goes on (we parse with stopAtErrors:
 * false), so an exceeded limit is remembered here and the caller refuses the document
 * when the parse returns, whatever pdf.js made of the error. The child's memory limit
 * stays the backstop. `installed` proves the hook took: a pdf.js upgrade that renames the
 * field makes the child fail its start-up check instead of silently parsing unmetered.
 */

const CONSTRUCTOR_FIELD = "_rawMinBufferLength";

interface DecodeStream {
  buffer: Uint8Array;
  ensureBuffer(requested: number): Uint8Array;
  readBlock(...args: unknown[]): void;
}

export class DecodedBytesLimitError extends Error {
  override readonly name = "DecodedBytesLimitError";
}

export class DecodedBytesMeter {
  /** True once a decoding stream has been seen and its class patched. */
  installed = false;
  /** The current document decoded more than its limit; everything it decodes from now on fails. */
  exceeded = false;
  /** An allocation for decoded data failed (the process's memory limit). */
  outOfMemory = false;
  private decodedBytes = 0;
  private limitBytes = Number.POSITIVE_INFINITY;
  /** Buffer capacity already counted, per stream. */
  private counted = new WeakMap<object, number>();
  private readonly patched = new WeakSet<object>();

  /** Start counting a new document. */
  begin(limitBytes: number): void {
    this.decodedBytes = 0;
    this.limitBytes = limitBytes;
    this.exceeded = false;
    this.outOfMemory = false;
    this.counted = new WeakMap();
  }

  /** Hooks pdf.js; call once, before the first document is opened. */
  install(): void {
    const meter = this;
    const Native = globalThis.DecompressionStream;
    globalThis.DecompressionStream = class MeteredDecompressionStream {
      readonly writable: WritableStream<BufferSource>;
      readonly readable: ReadableStream<Uint8Array>;
      constructor(format: CompressionFormat) {
        const native = new Native(format);
        this.writable = native.writable;
        this.readable = native.readable.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              meter.decodedBytes += chunk.byteLength;
              if (meter.decodedBytes > meter.limitBytes) meter.exceeded = true;
              if (meter.exceeded) controller.error(new DecodedBytesLimitError(`decoded streams exceed ${meter.limitBytes} bytes`));
              else controller.enqueue(chunk);
            },
          }),
        );
      }
    } as typeof DecompressionStream;
    Object.defineProperty(Object.prototype, CONSTRUCTOR_FIELD, {
      configurable: true,
      set(this: DecodeStream, value: unknown) {
        Object.defineProperty(this, CONSTRUCTOR_FIELD, { value, writable: true, enumerable: true, configurable: true });
        meter.adopt(this);
      },
    });
  }

  private adopt(stream: DecodeStream): void {
    for (let proto = Object.getPrototypeOf(stream); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      if (this.patched.has(proto)) continue;
      this.patched.add(proto);
      if (Object.hasOwn(proto, "ensureBuffer")) this.wrapEnsureBuffer(proto);
      if (Object.hasOwn(proto, "readBlock")) this.wrapReadBlock(proto);
    }
    this.installed = true;
  }

  private wrapEnsureBuffer(proto: DecodeStream): void {
    const original = proto.ensureBuffer;
    const meter = this;
    proto.ensureBuffer = function (this: DecodeStream, requested: number) {
      const growthBytes = requested - this.buffer.byteLength;
      if (growthBytes > 0) meter.check(growthBytes);
      try {
        return original.call(this, requested);
      } catch (error) {
        if (error instanceof RangeError) meter.outOfMemory = true;
        throw error;
      } finally {
        meter.count(this);
      }
    };
  }

  private wrapReadBlock(proto: DecodeStream): void {
    const original = proto.readBlock;
    const meter = this;
    proto.readBlock = function (this: DecodeStream, ...args: unknown[]) {
      // Past the limit, no stream of this document decodes another block.
      meter.check(0);
      try {
        return original.apply(this, args);
      } catch (error) {
        if (error instanceof RangeError) meter.outOfMemory = true;
        throw error;
      } finally {
        meter.count(this);
      }
    };
  }

  private check(growthBytes: number): void {
    if (!this.exceeded && this.decodedBytes + growthBytes <= this.limitBytes) return;
    this.exceeded = true;
    throw new DecodedBytesLimitError(`decoded streams exceed ${this.limitBytes} bytes`);
  }

  private count(stream: DecodeStream): void {
    const capacity = stream.buffer?.byteLength ?? 0;
    const before = this.counted.get(stream) ?? 0;
    if (capacity <= before) return;
    this.counted.set(stream, capacity);
    this.decodedBytes += capacity - before;
    if (this.decodedBytes > this.limitBytes) this.exceeded = true;
  }
}
