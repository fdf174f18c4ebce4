// Second process for the billing tests: serves the paid route over a shared data directory
// and prints its URL. `bun test/billing/paid-child.ts DATA_DIR [--crash-after-charge]`
import { startPaidServer } from "./paid-app";

const dataDir = process.argv[2];
if (!dataDir) throw new Error("usage: paid-child.ts DATA_DIR [--crash-after-charge]");
const server = await startPaidServer(dataDir, { crashAfterCharge: process.argv.includes("--crash-after-charge") });
process.stdout.write(`${server.url}\n`);
process.once("SIGTERM", () => server.stop().then(() => process.exit(0)));
