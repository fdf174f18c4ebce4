// A handle worker that connects and then never answers: the caller must give up waiting.
declare const self: Worker;
import type { WorkerInit } from "../../src/db/postgres/sync/protocol";
import { FLAG_REPLIED, STATE_FLAG, STATE_REPLY_BYTES } from "../../src/db/postgres/sync/protocol";
import { serialize } from "bun:jsc";

self.onmessage = (event: MessageEvent<WorkerInit | { kind: string }>) => {
  if (event.data.kind !== "init") return;
  const init = event.data as WorkerInit;
  const state = new Int32Array(init.state);
  const bytes = serialize({ ok: true, columns: [], rows: [], changes: 0 }, { binaryType: "nodebuffer" });
  new Uint8Array(init.reply, 0, bytes.length).set(bytes);
  Atomics.store(state, STATE_REPLY_BYTES, bytes.length);
  Atomics.store(state, STATE_FLAG, FLAG_REPLIED);
  Atomics.notify(state, STATE_FLAG);
};
