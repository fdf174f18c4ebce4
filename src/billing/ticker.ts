import { purgeExpiredIdempotencyKeys } from "../http/idempotency";
import type { BackgroundService } from "../lifecycle";
import { grantDueAllowances, type GrantDeps } from "./grants";
import { purgeStripeEvents } from "./store";
import { STRIPE_EVENT_RETENTION_MS } from "./top-ups";

export const BILLING_TICK_MS = 60_000;
const PURGE_BATCH_MAX = 10_000;

/**
 * Work that must happen without a request: monthly allowances, and forgetting expired
 * idempotency keys and old webhook event ids. Every node may tick at once: each allowance is
 * written once (its ledger key), and a row another node purged first is simply not counted.
 */
export function billingTick(deps: GrantDeps): { grants: number; idempotencyKeysPurged: number; stripeEventsPurged: number } {
  const nowMs = deps.clock.nowMs();
  return {
    grants: grantDueAllowances(deps),
    idempotencyKeysPurged: purgeExpiredIdempotencyKeys(deps.db, nowMs, PURGE_BATCH_MAX),
    stripeEventsPurged: purgeStripeEvents(deps.db, nowMs - STRIPE_EVENT_RETENTION_MS, PURGE_BATCH_MAX),
  };
}

export function billingTicker(deps: GrantDeps, intervalMs = BILLING_TICK_MS): BackgroundService {
  let timer: ReturnType<typeof setInterval> | undefined;
  const tick = () => {
    try {
      const done = billingTick(deps);
      if (done.grants + done.idempotencyKeysPurged + done.stripeEventsPurged > 0) deps.log.info("billing_tick", done);
    } catch (error) {
      deps.log.error("billing_tick_failed", { message: error instanceof Error ? error.message.slice(0, 200) : String(error) });
    }
  };
  return {
    name: "billing-ticker",
    start() {
      tick();
      timer = setInterval(tick, intervalMs);
    },
    stop() {
      clearInterval(timer);
    },
  };
}
