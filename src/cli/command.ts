import type { Config } from "../config";
import type { Deps } from "../deps";
import type { FlagSpec, ParsedFlags } from "./args";

export interface CommandContext {
  flags: ParsedFlags;
  positionals: string[];
  config: Config;
  /** Opens the database on first use; commands that need no database never open it. */
  deps(): Promise<Deps>;
  /** True when stdout is a terminal and --json was not given (progress bars, colour). */
  interactive: boolean;
}

/** What a command prints: `text` for people, `json` (one object, last line) with --json. */
export interface CommandResult {
  text: string;
  json: unknown;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  flags: FlagSpec;
  run(ctx: CommandContext): Promise<CommandResult>;
}
