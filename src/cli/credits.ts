import { isoFromMs } from "../clock";
import { getBalance, verifyLedger, type LedgerEntry, type LedgerVerification } from "../billing/ledger";
import { recordAdjustment, recordOperatorTopUp } from "../billing/operator";
import { listEntries } from "../billing/store";
import { openPostgresHandle, type PostgresHandle } from "../db/postgres/sync/handle";
import { redactDatabaseUrl } from "../db/postgres/connect";
import { requireOrganisation } from "../auth/service";
import { CliError, optionalString, requiredString } from "./args";
import type { Command, CommandResult } from "./command";

const SHOW_ENTRIES_MAX = 20;
const VERIFY_PROBLEMS_SHOWN = 20;

function requiredSignedInteger(raw: string, name: string): number {
  const value = Number(raw);
  if (!/^[+-]?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) throw new CliError(`--${name} must be an integer`);
  return value;
}

function entryJson(e: LedgerEntry) {
  return { id: e.id, type: e.type, amountPence: e.amountPence, currency: e.currency, description: e.description, createdAt: isoFromMs(e.createdAtMs) };
}

function entryLine(e: LedgerEntry): string {
  return `${isoFromMs(e.createdAtMs)}  ${e.type.padEnd(10)} ${String(e.amountPence).padStart(8)}p  ${e.description}`;
}

export const creditCommands: Command[] = [
  {
    name: "credits top-up",
    summary: "Record credit received outside the card checkout (bank transfer, air-gapped install)",
    usage: "regkb credits top-up --org ID --amount-pence N [--reference R]",
    flags: { org: "string", "amount-pence": "string", reference: "string" },
    async run({ flags, deps }) {
      const d = await deps();
      const orgId = requiredString(flags, "org");
      const amountPence = requiredSignedInteger(requiredString(flags, "amount-pence"), "amount-pence");
      if (amountPence < 1) throw new CliError("--amount-pence must be positive (use `regkb credits adjust` to take credit away)");
      const { entry, created } = recordOperatorTopUp(d, { orgId, amountPence, reference: optionalString(flags, "reference") });
      const balance = getBalance(d.db, orgId);
      return {
        json: { ...entryJson(entry), created, availablePence: balance.availablePence },
        text: `${created ? "recorded" : "already recorded (same reference)"}: top_up ${entry.amountPence}p for ${orgId} (entry ${entry.id}); available ${balance.availablePence}p`,
      };
    },
  },
  {
    name: "credits adjust",
    summary: "Correct an organisation's credit with a signed adjustment and a reason",
    usage: "regkb credits adjust --org ID --amount-pence ±N --reason R",
    flags: { org: "string", "amount-pence": "string", reason: "string" },
    async run({ flags, deps }) {
      const d = await deps();
      const orgId = requiredString(flags, "org");
      const amountPence = requiredSignedInteger(requiredString(flags, "amount-pence"), "amount-pence");
      const entry = recordAdjustment(d, { orgId, amountPence, reason: requiredString(flags, "reason") });
      const balance = getBalance(d.db, orgId);
      return {
        json: { ...entryJson(entry), availablePence: balance.availablePence },
        text: `recorded: adjustment ${entry.amountPence}p for ${orgId} (entry ${entry.id}); available ${balance.availablePence}p`,
      };
    },
  },
  {
    name: "credits show",
    summary: "Show an organisation's balance and latest ledger entries",
    usage: "regkb credits show --org ID",
    flags: { org: "string" },
    async run({ flags, deps }) {
      const d = await deps();
      const orgId = requiredString(flags, "org");
      requireOrganisation(d, orgId);
      const balance = getBalance(d.db, orgId);
      const entries = listEntries(d.db, orgId, SHOW_ENTRIES_MAX, 0);
      const text = [
        `organisation ${orgId}: balance ${balance.balancePence}p, held ${balance.heldPence}p, available ${balance.availablePence}p (GBP)`,
        entries.length ? `latest ${entries.length} entries, newest first:` : "no ledger entries",
        ...entries.map(entryLine),
      ].join("\n");
      return { json: { orgId, ...balance, entries: entries.map(entryJson) }, text };
    },
  },
  {
    name: "credits verify",
    summary: "Recompute every balance and hold from the ledger entries (PostgreSQL with --database-url); exit 1 on any mismatch",
    usage: "regkb credits verify [--database-url URL]",
    flags: {},
    async run({ config, deps }) {
      if (config.databaseUrl === undefined) return verificationResult(verifyLedger((await deps()).db));
      // The very verifyLedger SQLite runs, through the synchronous handle: one snapshot (REPEATABLE READ).
      let db: PostgresHandle | undefined;
      try {
        db = openPostgresHandle({ url: config.databaseUrl });
        return verificationResult(verifyLedger(db));
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw new Error(`PostgreSQL at ${redactDatabaseUrl(config.databaseUrl)}: ${(error as Error).message}`);
      } finally {
        db?.close();
      }
    },
  },
];

/** The same words and exit status whichever engine was verified. */
export function verificationResult(report: LedgerVerification): CommandResult {
  const problems = [
    ...report.mismatches.map((m) => `organisation ${m.orgId}: ${m.problem}`),
    ...report.holdProblems.map((h) => `run ${h.runId}: ${h.problem}`),
  ];
  if (!report.ok) {
    throw new CliError(
      `ledger verification FAILED (${problems.length} problems over ${report.organisations} organisations, ${report.entries} entries): ` +
        problems.slice(0, VERIFY_PROBLEMS_SHOWN).join("; "),
    );
  }
  return {
    json: report,
    text: `ledger verified: ${report.organisations} organisations, ${report.entries} entries; every balance and hold matches its entries`,
  };
}
