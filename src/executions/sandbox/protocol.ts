/**
 * Length-prefixed frames between the pool and a sandbox child: a 4-byte big-endian
 * length, then that many bytes of UTF-8 JSON. Both directions use it; the parent treats
 * everything the child sends as hostile (user code can write raw bytes to fd 1 once it
 * escapes into JavaScript), so the reader bounds frame size and validates each message.
 */

/** Largest frame either side accepts; a chunk of output is at most OUTPUT_CHUNK_CHARS_MAX characters. */
export const FRAME_BYTES_MAX = 512 * 1024;
export const OUTPUT_CHUNK_CHARS_MAX = 16 * 1024;
/** An exit status is one byte, as for any process on Linux. */
export const EXIT_CODE_MAX = 255;

/** Child → parent. */
export type ChildMessage =
  | { type: "ready" }
  | { type: "started" }
  | { type: "stdout"; text: string }
  | { type: "stderr"; text: string }
  | { type: "result"; exitCode: number }
  | { type: "fatal"; message: string };

/** Parent → child: the one run this child serves. */
export interface RunRequest {
  code: string;
}

export class ProtocolError extends Error {}

export function encodeFrame(message: unknown): Uint8Array {
  const body = new TextEncoder().encode(JSON.stringify(message));
  if (body.length > FRAME_BYTES_MAX) throw new ProtocolError(`frame of ${body.length} bytes exceeds ${FRAME_BYTES_MAX}`);
  const frame = new Uint8Array(4 + body.length);
  new DataView(frame.buffer).setUint32(0, body.length, false);
  frame.set(body, 4);
  return frame;
}

/**
 * Incremental decoder: push bytes as they arrive; each complete frame goes to `onFrame` in
 * order, so frames before a malformed one in the same chunk are still delivered.
 */
export class FrameReader {
  private buffer = new Uint8Array(0);

  push(chunk: Uint8Array, onFrame: (frame: unknown) => void): void {
    const joined = new Uint8Array(this.buffer.length + chunk.length);
    joined.set(this.buffer, 0);
    joined.set(chunk, this.buffer.length);
    let offset = 0;
    while (joined.length - offset >= 4) {
      const length = new DataView(joined.buffer, offset, 4).getUint32(0, false);
      if (length > FRAME_BYTES_MAX) throw new ProtocolError(`frame of ${length} bytes exceeds ${FRAME_BYTES_MAX}`);
      if (joined.length - offset - 4 < length) break;
      const body = joined.subarray(offset + 4, offset + 4 + length);
      offset += 4 + length;
      let frame: unknown;
      try {
        frame = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
      } catch {
        throw new ProtocolError("frame is not UTF-8 JSON");
      }
      onFrame(frame);
    }
    this.buffer = joined.slice(offset);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Validate a decoded frame from the (untrusted) child. */
export function parseChildMessage(value: unknown): ChildMessage {
  if (!isRecord(value)) throw new ProtocolError("message is not an object");
  switch (value.type) {
    case "ready":
    case "started":
      return { type: value.type };
    case "stdout":
    case "stderr":
      if (typeof value.text !== "string" || value.text.length > OUTPUT_CHUNK_CHARS_MAX) {
        throw new ProtocolError(`${value.type} chunk is not a bounded string`);
      }
      // Lone surrogates (possible once user code writes its own frames) would not survive storage as UTF-8.
      return { type: value.type, text: value.text.toWellFormed() };
    case "result":
      // User code can write frames of its own: only a real process exit status (one byte) is believable.
      if (!Number.isInteger(value.exitCode) || (value.exitCode as number) < 0 || (value.exitCode as number) > EXIT_CODE_MAX) {
        throw new ProtocolError("result exitCode is not an integer from 0 to 255");
      }
      return { type: "result", exitCode: value.exitCode as number };
    case "fatal":
      if (typeof value.message !== "string") throw new ProtocolError("fatal message is not a string");
      return { type: "fatal", message: value.message.slice(0, 2000) };
    default:
      throw new ProtocolError("unknown message type");
  }
}

export function parseRunRequest(value: unknown): RunRequest {
  if (!isRecord(value) || typeof value.code !== "string") throw new ProtocolError("run request has no code");
  return { code: value.code };
}
