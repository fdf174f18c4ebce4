import { requireOrganisation } from "../auth/service";
import { isoFromMs } from "../clock";
import { listUsers } from "../dashboard/store";
import { createUser, resetUserPassword } from "../dashboard/users";
import { requiredString } from "./args";
import type { Command } from "./command";

const USERS_LIST_MAX = 10_000;

function signInText(publicUrl: string, email: string, oneTimePassword: string): string {
  return [
    `Sign in at ${publicUrl}/login`,
    `  email:             ${email}`,
    `  one-time password: ${oneTimePassword}`,
    "The password is shown once and must be replaced at first sign-in.",
  ].join("\n");
}

export const userCommands: Command[] = [
  {
    name: "user create",
    summary: "Create a dashboard user for an organisation (prints a one-time password)",
    usage: "regkb user create --org ID --email E",
    flags: { org: "string", email: "string" },
    async run({ flags, deps, config }) {
      const user = await createUser(await deps(), { orgId: requiredString(flags, "org"), email: requiredString(flags, "email") });
      return {
        json: { id: user.id, email: user.email, oneTimePassword: user.oneTimePassword, signInUrl: `${config.publicUrl}/login` },
        text: `created user ${user.id}\n${signInText(config.publicUrl, user.email, user.oneTimePassword)}`,
      };
    },
  },
  {
    name: "user reset-password",
    summary: "Give a dashboard user a new one-time password and sign them out everywhere",
    usage: "regkb user reset-password --email E",
    flags: { email: "string" },
    async run({ flags, deps, config }) {
      const user = await resetUserPassword(await deps(), requiredString(flags, "email"));
      return {
        json: { id: user.id, email: user.email, oneTimePassword: user.oneTimePassword, signInUrl: `${config.publicUrl}/login` },
        text: signInText(config.publicUrl, user.email, user.oneTimePassword),
      };
    },
  },
  {
    name: "user list",
    summary: "List an organisation's dashboard users",
    usage: "regkb user list --org ID",
    flags: { org: "string" },
    async run({ flags, deps }) {
      const d = await deps();
      const orgId = requiredString(flags, "org");
      requireOrganisation(d, orgId);
      const users = listUsers(d.db, orgId, USERS_LIST_MAX).map((u) => ({
        id: u.id,
        email: u.email,
        createdAt: isoFromMs(u.createdAtMs),
        lastSignInAt: u.lastSignInAtMs === null ? null : isoFromMs(u.lastSignInAtMs),
        mustChoosePassword: u.passwordTemporary,
      }));
      const text = users.map((u) => `${u.id}  ${u.email}${u.mustChoosePassword ? "  (one-time password not yet replaced)" : ""}`).join("\n") || "no users";
      return { json: { users }, text };
    },
  },
];
