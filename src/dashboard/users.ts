import { requireOrganisation } from "../auth/service";
import { KEY_PREFIX } from "../auth/keys";
import type { Clock } from "../clock";
import { isUniqueViolation, type SqlDatabase } from "../db/sql-database";
import { notFound, Refusal, validationFailed } from "../errors";
import { uuidv7 } from "../ids";
import { recordLoginSuccess, reserveLoginAttempt } from "./login-limit";
import * as store from "./store";

export const EMAIL_LENGTH_MAX = 254;
export const PASSWORD_LENGTH_MIN = 12;
/** Bounds the work one sign-in can ask of argon2 and of the request parser. */
export const PASSWORD_LENGTH_MAX = 256;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** No 0/O, 1/l/I: the one-time password is read off a terminal and typed by a person. */
const READABLE = "23456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ";
/** OWASP's argon2id baseline (19 MiB, 2 passes): costly to guess offline, ~50 ms per sign-in on a small server. */
const ARGON = { algorithm: "argon2id", memoryCost: 19_456, timeCost: 2 } as const;

/** What users and sign-in use. */
export interface UserDeps {
  db: SqlDatabase;
  clock: Clock;
}

/** Verified against when the email is unknown, so a miss costs the same time as a wrong password. */
let decoyHash: Promise<string> | undefined;

export function normaliseEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

function requireEmail(raw: string): string {
  const email = normaliseEmail(raw);
  if (email.length > EMAIL_LENGTH_MAX || !EMAIL_PATTERN.test(email)) throw validationFailed("email must be an address like name@example.com");
  return email;
}

/** Four groups of five readable characters: about 117 bits. */
export function generateOneTimePassword(): string {
  const chars: string[] = [];
  const limit = 256 - (256 % READABLE.length);
  while (chars.length < 20) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      if (byte < limit && chars.length < 20) chars.push(READABLE[byte % READABLE.length]!);
    }
  }
  return [0, 5, 10, 15].map((i) => chars.slice(i, i + 5).join("")).join("-");
}

/** Why a chosen password is unacceptable, or null when it is fine. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_LENGTH_MIN) return `use at least ${PASSWORD_LENGTH_MIN} characters`;
  if (password.length > PASSWORD_LENGTH_MAX) return `use at most ${PASSWORD_LENGTH_MAX} characters`;
  // An API key must never double as a dashboard password.
  if (password.startsWith(KEY_PREFIX)) return "an API key cannot be used as a password";
  return null;
}

/** Operator action: a user of an organisation with a one-time password they must replace at first sign-in. */
export async function createUser(deps: UserDeps, input: { orgId: string; email: string }): Promise<{ id: string; email: string; oneTimePassword: string }> {
  requireOrganisation(deps, input.orgId);
  const email = requireEmail(input.email);
  const exists = () => new Refusal("user_exists", `a user with email ${email} already exists`);
  if (store.findUserByEmail(deps.db, email)) throw exists();
  const oneTimePassword = generateOneTimePassword();
  const user: store.UserRow = {
    id: uuidv7(),
    orgId: input.orgId,
    email,
    passwordHash: await Bun.password.hash(oneTimePassword, ARGON),
    passwordTemporary: true,
    createdAtMs: deps.clock.nowMs(),
    lastSignInAtMs: null,
  };
  try {
    store.insertUser(deps.db, user);
  } catch (error) {
    // Created meanwhile (while the password was hashed, or by another node): the same refusal.
    if (isUniqueViolation(error)) throw exists();
    throw error;
  }
  return { id: user.id, email, oneTimePassword };
}

/** Operator action for a forgotten password: a new one-time password, and every session of the user ends. */
export async function resetUserPassword(deps: UserDeps, rawEmail: string): Promise<{ id: string; email: string; oneTimePassword: string }> {
  const email = requireEmail(rawEmail);
  const user = store.findUserByEmail(deps.db, email);
  if (!user) throw notFound(`no user with email ${email}`);
  const oneTimePassword = generateOneTimePassword();
  const hash = await Bun.password.hash(oneTimePassword, ARGON);
  deps.db.transaction(() => {
    store.setPassword(deps.db, user.id, hash, true);
    store.deleteUserSessions(deps.db, user.id);
  }).immediate();
  return { id: user.id, email, oneTimePassword };
}

/**
 * Email + password sign-in. The attempt is counted before the password is checked, so a
 * locked-out guesser learns nothing and parallel guesses cannot overrun the limit; a
 * success then takes its attempt back.
 */
export async function signIn(deps: UserDeps, input: { email: string; password: string; clientIp: string }): Promise<store.UserRow> {
  const email = normaliseEmail(input.email).slice(0, EMAIL_LENGTH_MAX);
  const attempt = reserveLoginAttempt(deps, email, input.clientIp);
  const user = store.findUserByEmail(deps.db, email);
  const password = input.password.slice(0, PASSWORD_LENGTH_MAX);
  const ok = user
    ? await Bun.password.verify(password, user.passwordHash)
    : (await Bun.password.verify(password, await (decoyHash ??= Bun.password.hash(generateOneTimePassword(), ARGON))), false);
  if (!user || !ok || input.password.length > PASSWORD_LENGTH_MAX) {
    throw new Refusal("invalid_credentials", "that email and password do not match an account");
  }
  recordLoginSuccess(deps, email, attempt);
  store.recordSignIn(deps.db, user.id, deps.clock.nowMs());
  return user;
}

/** A signed-in user replaces their password; other sessions of theirs end. */
export async function changePassword(
  deps: UserDeps,
  input: { userId: string; currentPassword: string; newPassword: string; keepSessionTokenHash: string },
): Promise<void> {
  const user = store.findUser(deps.db, input.userId);
  if (!user) throw notFound("no such user");
  if (input.currentPassword.length > PASSWORD_LENGTH_MAX || !(await Bun.password.verify(input.currentPassword, user.passwordHash))) {
    throw new Refusal("current_password_incorrect", "the current password is not correct");
  }
  const problem = passwordProblem(input.newPassword);
  if (problem) throw validationFailed(`new password: ${problem}`);
  if (input.newPassword === input.currentPassword) throw validationFailed("new password: choose a password different from the current one");
  const hash = await Bun.password.hash(input.newPassword, ARGON);
  deps.db.transaction(() => {
    store.setPassword(deps.db, user.id, hash, false);
    store.deleteUserSessions(deps.db, user.id, input.keepSessionTokenHash);
  }).immediate();
}
