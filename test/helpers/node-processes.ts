// Child processes standing for nodes (each with its own database handle), driven over
// stdin/stdout one line at a time: each says `ready` once connected and waits for `go`.
import { expect } from "bun:test";

const LINE_TIMEOUT_MS = 30_000;

export interface NodeProcess {
  proc: Bun.Subprocess<"pipe", "pipe", "inherit">;
  lines: AsyncIterator<string>;
}

/** A stream's text, line by line (the benchmarks' child processes speak the same way). */
export async function* linesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = text.indexOf("\n")) >= 0) {
      yield text.slice(0, end);
      text = text.slice(end + 1);
    }
  }
}

/** The node's next line of output; fails when it exits first or says nothing within LINE_TIMEOUT_MS. */
export async function nextLine(node: NodeProcess, what: string): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`node: no ${what} within ${LINE_TIMEOUT_MS} ms`)), LINE_TIMEOUT_MS)));
  try {
    const next = await Promise.race([node.lines.next(), timeout]);
    if (next.done) throw new Error(`node exited before ${what} (status ${await node.proc.exited})`);
    return next.value;
  } finally {
    clearTimeout(timer);
  }
}

/** Starts `script` once per argument list and waits until every node is connected and ready. */
export async function startNodes(script: string, argsPerNode: string[][]): Promise<NodeProcess[]> {
  const nodes = argsPerNode.map((args) => {
    const proc = Bun.spawn([process.execPath, script, ...args], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
    return { proc, lines: linesOf(proc.stdout)[Symbol.asyncIterator]() };
  });
  for (const node of nodes) expect(await nextLine(node, "ready")).toBe("ready");
  return nodes;
}

export function tell(node: NodeProcess, line: string): void {
  node.proc.stdin.write(`${line}\n`);
  node.proc.stdin.flush();
}
