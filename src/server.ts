import { buildApp } from "./app";
import { closeDatabases, type Deps } from "./deps";
import { limitHeaders } from "./http/header-limit";
import { observe } from "./http/observe";
import type { BackgroundService } from "./lifecycle";


export interface RunningServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Bun answers a bare 413 (no Error body) above this; set well above the upload limit so
 * that, for any plausible declared length, bodyLimit answers first with the JSON error.
 */
const BUN_BODY_BYTES_SLACK = 64 * 1024 * 1024;

export async function startServer(
  deps: Deps,
  options: { host: string; port: number; background?: BackgroundService[] },
): Promise<RunningServer> {
  const app = buildApp(deps);
  const background = options.background ?? [];
  const address = `${options.host.includes(":") ? `[${options.host}]` : options.host}:${options.port}`;
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: options.host,
      port: options.port,
      maxRequestBodySize: deps.config.maxUploadBytes + BUN_BODY_BYTES_SLACK,
      fetch: observe(deps, limitHeaders((request) => app.handle(request))),
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const why = code === "EADDRINUSE" ? "the address is already in use" : error instanceof Error ? error.message : String(error);
    throw new Error(`cannot listen on ${address}: ${why}`);
  }
  // Workers start only once the port is ours: a server that cannot listen must not work the
  // queue (a supervisor restarts it), and a service that fails to start stops everything.
  const started: BackgroundService[] = [];
  try {
    for (const service of background) {
      await service.start();
      started.push(service);
    }
  } catch (error) {
    await server.stop(true);
    for (const service of started.reverse()) await service.stop();
    throw error;
  }
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${server.port}`;
  deps.log.info("server_started", { url });
  let stopping: Promise<void> | undefined;
  return {
    url,
    port: server.port ?? options.port,
    stop: () =>
      (stopping ??= (async () => {
        // Stop accepting, let in-flight requests finish (bounded), then stop workers and close the database.
        let grace: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([server.stop(false), new Promise((done) => (grace = setTimeout(done, deps.config.shutdownTimeoutMs)))]);
        // A pending grace timer would keep the process alive after everything else has stopped.
        clearTimeout(grace);
        await server.stop(true);
        for (const service of [...background].reverse()) await service.stop();
        await deps.vectorSearchPool?.close();
        await closeDatabases(deps);
        deps.log.info("server_stopped", {});
      })()),
  };
}
