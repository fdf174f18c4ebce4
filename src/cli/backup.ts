import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { requiredString } from "./args";
import { CliError } from "./args";
import type { Command } from "./command";

export const backupCommands: Command[] = [
  {
    name: "backup",
    summary: "Write a consistent copy of the live database (safe while serving)",
    usage: "regkb backup --to FILE",
    flags: { to: "string" },
    async run({ flags, deps }) {
      const target = resolve(requiredString(flags, "to"));
      if (existsSync(target)) throw new CliError(`${target} already exists; choose a new file`);
      const d = await deps();
      // VACUUM INTO reads one snapshot inside a read transaction: consistent while the server writes.
      d.db.query("VACUUM INTO ?").run(target);
      const bytes = Bun.file(target).size;
      return { json: { path: target, bytes }, text: `backup written to ${target} (${bytes} bytes)` };
    },
  },
];
