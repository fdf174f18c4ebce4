/** A long-lived part of the server (run workers, sandbox pool, periodic ticks), started after it listens. */
export interface BackgroundService {
  name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}
