import type { Database } from "bun:sqlite";
import { systemClock, type Clock } from "./clock";
import type { Config } from "./config";
import { openDatabase } from "./db/open";
import { Metrics } from "./http/metrics";
import { RateLimiter } from "./http/rate-limit";
import { createLogger, type Logger } from "./log";

/**
 * Everything a request or a run needs, built once and passed in (no module singletons),
 * so tests can give each server its own database, clock and configuration.
 */
export interface Deps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  rateLimiter: RateLimiter;
}

export interface DepsOverrides {
  clock?: Clock;
  log?: Logger;
}

export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const db = await openDatabase(config.dataDir);
  return {
    config,
    db,
    clock: overrides.clock ?? systemClock,
    log: overrides.log ?? createLogger(config.logLevel),
    metrics: new Metrics(),
    rateLimiter: new RateLimiter(config.rateLimitPerMinute),
  };
}
