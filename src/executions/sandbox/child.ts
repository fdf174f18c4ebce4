import { writeSync } from "node:fs";
import { loadPyodide, type PyodideAPI } from "pyodide";
import { dieWithParent } from "../../platform/process-controls";
import { applyResourceLimits, installSeccomp, pivotIntoEmptyRoot } from "./lockdown";
import {
  encodeFrame,
  FRAME_BYTES_MAX,
  FrameReader,
  OUTPUT_CHUNK_CHARS_MAX,
  parseRunRequest,
  type ChildMessage,
  type RunRequest,
} from "./protocol";
import { WASM_PAGE_BYTES, withMemoryMaximum } from "./wasm-memory";

/**
 * `regkb __sandbox`: one sandbox child. It loads Pyodide, locks itself down, says "ready",
 * then serves exactly one run read from stdin and waits for the parent to kill it.
 * Everything it prints on stdout is a protocol frame; the parent owns the deadline and
 * kills us when it passes.
 *
 * Environment (set by the pool; the child gets nothing else):
 *   REGKB_SANDBOX_MODE         isolated | unsafe-no-isolation | snapshot
 *   REGKB_SANDBOX_INDEX_DIR    materialised Pyodide directory (trailing slash)
 *   REGKB_SANDBOX_SNAPSHOT     memory snapshot to boot from (optional)
 *   REGKB_SANDBOX_CPU_SECONDS  RLIMIT_CPU budget on top of start-up, a backstop behind the parent's deadline
 *   REGKB_SANDBOX_MEMORY_BYTES memory a run may use: Python's wasm memory maximum, and the
 *                              process's rlimits above its locked-down size
 */

/** Output the child forwards per stream; the parent keeps 64 KiB, so a little more proves truncation. */
const FORWARD_BYTES_MAX = 64 * 1024 + 4;

const RUNNER_SOURCE = `
def __regkb_run(source):
    import sys, traceback
    status = 0
    try:
        exec(compile(source, "<execution>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as exit:
        code = exit.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            # A process exit status is one byte, as for python3 on Linux.
            status = code & 0xFF
        else:
            print(code, file=sys.stderr)
            status = 1
    except BaseException as error:
        # Skip this runner's own frame so the traceback starts at the user's code.
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
    return status
# A memory snapshot freezes any PRNG state it captured; every run must get its own.
import sys as __regkb_sys
if "random" in __regkb_sys.modules:
    __regkb_sys.modules["random"].seed()
del __regkb_sys
__regkb_run
`;

function send(message: ChildMessage): void {
  const frame = encodeFrame(message);
  let offset = 0;
  while (offset < frame.length) {
    try {
      offset += writeSync(1, frame, offset, frame.length - offset);
    } catch (error) {
      // stdout may be non-blocking; a full pipe just means the parent has not read yet.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/** Forwards one Python stream as bounded, valid-UTF-8 chunks, dropping what the parent would discard anyway. */
function streamForwarder(type: "stdout" | "stderr") {
  const decoder = new TextDecoder("utf-8");
  let forwardedBytes = 0;
  return {
    write(bytes: Uint8Array): number {
      if (forwardedBytes < FORWARD_BYTES_MAX) {
        const slice = bytes.subarray(0, FORWARD_BYTES_MAX - forwardedBytes);
        forwardedBytes += slice.length;
        const text = decoder.decode(slice, { stream: true });
        for (let start = 0; start < text.length; start += OUTPUT_CHUNK_CHARS_MAX) {
          send({ type, text: text.slice(start, start + OUTPUT_CHUNK_CHARS_MAX) });
        }
      }
      return bytes.length;
    },
  };
}

async function readRunRequest(): Promise<RunRequest> {
  const reader = new FrameReader();
  for await (const chunk of Bun.stdin.stream()) {
    let request: RunRequest | undefined;
    reader.push(chunk, (frame) => (request ??= parseRunRequest(frame)));
    if (request) return request;
  }
  throw new Error("stdin closed before a run request arrived");
}

/**
 * Loads Pyodide. With `memoryBytesMax`, its wasm module declares that memory maximum:
 * Pyodide reads and instantiates the module itself, so the bytes are rewritten on their
 * way through WebAssembly.instantiate (only while loading).
 */
async function load(indexDir: string, snapshot: Uint8Array | undefined, makeSnapshot: boolean, memoryBytesMax?: number): Promise<PyodideAPI> {
  const instantiate = WebAssembly.instantiate;
  let limited = memoryBytesMax === undefined;
  if (memoryBytesMax !== undefined) {
    const maximumPages = Math.floor(memoryBytesMax / WASM_PAGE_BYTES);
    WebAssembly.instantiate = ((source: BufferSource | WebAssembly.Module, imports?: WebAssembly.Imports) => {
      if (source instanceof WebAssembly.Module) return instantiate(source, imports);
      const bytes = ArrayBuffer.isView(source) ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength) : new Uint8Array(source);
      const patched = withMemoryMaximum(bytes, maximumPages);
      if (patched) limited = true;
      return instantiate(patched ?? bytes, imports);
    }) as typeof WebAssembly.instantiate;
  }
  try {
    const pyodide = await loadPyodide({
      indexURL: indexDir,
      // `import js` gets an empty object instead of the host's globals (defence in depth only:
      // Python can still reach JavaScript's Function constructor; the OS layers are the boundary).
      jsglobals: Object.create(null),
      env: { HOME: "/home/pyodide", PYTHONHASHSEED: "random" },
      stdout: () => {},
      stderr: () => {},
      checkAPIVersion: true,
      _makeSnapshot: makeSnapshot,
      _loadSnapshot: snapshot,
    });
    if (!limited) throw new Error("Pyodide's wasm module defines no memory to limit");
    return pyodide;
  } finally {
    WebAssembly.instantiate = instantiate;
  }
}

async function makeSnapshot(indexDir: string): Promise<never> {
  const pyodide = await load(indexDir, undefined, true);
  const snapshot = pyodide.makeMemorySnapshot();
  let offset = 0;
  while (offset < snapshot.length) offset += writeSync(1, snapshot, offset, Math.min(FRAME_BYTES_MAX, snapshot.length - offset));
  process.exit(0);
}

async function readSnapshot(path: string | undefined): Promise<Uint8Array | undefined> {
  if (!path) return undefined;
  const file = Bun.file(path);
  if (!(await file.exists())) return undefined;
  return new Uint8Array(await file.arrayBuffer());
}

/**
 * After the result the parent reads this process's peak memory from /proc before it believes
 * the result (memory-watch.ts), however late it gets to it; an exited process has none left.
 */
function waitToBeKilled(): never {
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

export async function sandboxMain(): Promise<never> {
  const mode = process.env.REGKB_SANDBOX_MODE;
  const indexDir = process.env.REGKB_SANDBOX_INDEX_DIR;
  const cpuSeconds = Number(process.env.REGKB_SANDBOX_CPU_SECONDS ?? "330");
  const memoryBytes = Number(process.env.REGKB_SANDBOX_MEMORY_BYTES);
  try {
    // Our parent is the server (snapshot and unsafe modes) or `unshare`, which itself dies with the server (probe.ts).
    dieWithParent(undefined);
    if (!indexDir) throw new Error("REGKB_SANDBOX_INDEX_DIR is not set");
    if (mode === "snapshot") return await makeSnapshot(indexDir);
    if (mode !== "isolated" && mode !== "unsafe-no-isolation") throw new Error(`unknown sandbox mode ${mode}`);
    if (!Number.isSafeInteger(memoryBytes) || memoryBytes <= 0) throw new Error("REGKB_SANDBOX_MEMORY_BYTES is not set");

    const pyodide = await load(indexDir, await readSnapshot(process.env.REGKB_SANDBOX_SNAPSHOT), false, memoryBytes);
    pyodide.setStdout(streamForwarder("stdout"));
    pyodide.setStderr(streamForwarder("stderr"));
    pyodide.setStdin({ error: true });
    const run = pyodide.runPython(RUNNER_SOURCE) as (source: string) => number;

    // The child's environment is the pool's plumbing, not something user code should see.
    for (const name of Object.keys(process.env)) delete process.env[name];
    applyResourceLimits(Number.isSafeInteger(cpuSeconds) && cpuSeconds > 0 ? cpuSeconds : 330, memoryBytes);
    if (mode === "isolated") {
      pivotIntoEmptyRoot(indexDir.replace(/\/+$/, ""));
      installSeccomp();
    }
    send({ type: "ready" });

    const request = await readRunRequest();
    send({ type: "started" });
    let exitCode: number;
    try {
      exitCode = run(request.code);
    } catch (error) {
      // A JavaScript-level abort (wasm trap, stack exhaustion) is still the user's code failing.
      send({ type: "stderr", text: `fatal: the interpreter aborted: ${String(error).slice(0, 1000)}\n` });
      exitCode = 1;
    }
    send({ type: "result", exitCode });
    return waitToBeKilled();
  } catch (error) {
    try {
      send({ type: "fatal", message: String(error instanceof Error ? error.message : error) });
    } finally {
      process.exit(70);
    }
  }
}
