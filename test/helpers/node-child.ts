// The child's side of node-processes.ts: a line to the parent on stdout, and a wait for a
// word from it on stdin.
import { writeSync } from "node:fs";

/** stdin's lines, opened at the first wait (an open stdin keeps the process alive). */
let stdin: AsyncIterator<string> | undefined;

/** Writes one line to the parent at once (unbuffered, so it arrives even if the process is killed next). */
export function say(line: string): void {
  writeSync(1, `${line}\n`);
}

/** Resolves once the parent sends `word` on a line of its own; later waits read on from there. */
export async function waitFor(word: string): Promise<void> {
  stdin ??= console[Symbol.asyncIterator]();
  for (let next = await stdin.next(); !next.done; next = await stdin.next()) if (next.value.trim() === word) return;
}
