/** Flags a command accepts: name → "string" (takes a value) or "boolean". */
export type FlagSpec = Record<string, "string" | "boolean">;
export type ParsedFlags = Record<string, string | boolean | undefined>;

export class CliError extends Error {}

const ARG_LENGTH_MAX = 10_000;

/** Strict `--name value` / `--name=value` / `--flag` parsing: unknown flags are errors, not ignored. */
export function parseFlags(args: readonly string[], spec: FlagSpec): { flags: ParsedFlags; positionals: string[] } {
  const flags: ParsedFlags = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.length > ARG_LENGTH_MAX) throw new CliError(`argument longer than ${ARG_LENGTH_MAX} characters`);
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const kind = spec[name];
    if (!kind) throw new CliError(`unknown flag --${name}`);
    if (kind === "boolean") {
      if (eq !== -1) throw new CliError(`--${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || (eq === -1 && value.startsWith("--"))) throw new CliError(`--${name} needs a value`);
    flags[name] = value;
  }
  return { flags, positionals };
}

export function requiredString(flags: ParsedFlags, name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || value === "") throw new CliError(`--${name} is required`);
  return value;
}

export function optionalString(flags: ParsedFlags, name: string): string | undefined {
  const value = flags[name];
  return typeof value === "string" ? value : undefined;
}

export function optionalInteger(flags: ParsedFlags, name: string, min: number, max: number): number | undefined {
  const raw = optionalString(flags, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new CliError(`--${name} must be an integer from ${min} to ${max}`);
  return value;
}

export function slugList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  return raw.split(",").map((s) => s.trim()).filter(Boolean);
}
