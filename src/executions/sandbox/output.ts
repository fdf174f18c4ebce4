/** stdout and stderr each keep at most this many UTF-8 bytes, marker included (interface.md: 64KB each). */
export const OUTPUT_BYTES_MAX = 64 * 1024;
export const TRUNCATION_MARKER = "\n[output truncated at 64 KiB]\n";

const encoder = new TextEncoder();
const MARKER_BYTES = encoder.encode(TRUNCATION_MARKER).length;

/** Accumulates one stream up to the cap; cuts on a character boundary, never inside a UTF-8 sequence. */
export class CappedOutput {
  private readonly parts: string[] = [];
  private bytes = 0;
  private truncated = false;

  append(text: string): void {
    if (this.truncated) return;
    const size = encoder.encode(text).length;
    if (this.bytes + size > OUTPUT_BYTES_MAX) {
      this.truncated = true;
      // encodeInto writes whole characters only, so the kept prefix is valid UTF-8.
      const { read } = encoder.encodeInto(text, new Uint8Array(OUTPUT_BYTES_MAX - this.bytes));
      this.parts.push(text.slice(0, read));
      return;
    }
    this.parts.push(text);
    this.bytes += size;
  }

  text(): string {
    if (!this.truncated) return this.parts.join("");
    const joined = this.parts.join("");
    const keep = new Uint8Array(OUTPUT_BYTES_MAX - MARKER_BYTES);
    const { read } = encoder.encodeInto(joined, keep);
    return joined.slice(0, read) + TRUNCATION_MARKER;
  }
}
