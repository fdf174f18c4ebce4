import type { Deps } from "./deps";
import type { BackgroundService } from "./server";

/** The long-lived parts a serving process runs besides HTTP, started in this order. */
export function backgroundServices(_deps: Deps): BackgroundService[] {
  return [];
}
