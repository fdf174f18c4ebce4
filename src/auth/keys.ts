import { timingSafeEqual } from "node:crypto";

/** decisions.md: `rk_live_` + 40 base62 characters (≥ 238 bits of secret). */
export const KEY_PREFIX = "rk_live_";
export const KEY_SECRET_LENGTH = 40;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${KEY_SECRET_LENGTH}}$`);

export function generateApiKey(): string {
  let secret = "";
  // Rejection sampling keeps every character uniform: 248 = 4 × 62 is the largest multiple below 256.
  while (secret.length < KEY_SECRET_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < 248 && secret.length < KEY_SECRET_LENGTH) secret += BASE62[byte % 62];
    }
  }
  return KEY_PREFIX + secret;
}

export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function hashApiKey(key: string): string {
  return new Bun.CryptoHasher("sha256").update(key).digest("hex");
}

export function hashesEqual(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** What a person sees in lists: enough to tell keys apart, never enough to use one. */
export function displayPrefix(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}…`;
}
