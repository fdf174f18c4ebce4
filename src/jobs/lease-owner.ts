import { hostname } from "node:os";

/**
 * A lease owner names the process holding it: `<host>/<pid>/<uuid>`. The uuid tells two
 * engines apart (a restarted server, two test servers in one process); host and pid let a
 * restarted server see at once that the previous holder is dead, instead of waiting for
 * its lease to expire.
 */
export function newLeaseOwner(): string {
  return `${hostname()}/${process.pid}/${crypto.randomUUID()}`;
}

/**
 * True only when the owner certainly no longer runs: same host, another pid, and that pid
 * does not exist. Anything uncertain (another host, a pid that exists — perhaps reused,
 * permission denied) is false, so the caller waits for the lease to expire.
 */
export function leaseOwnerIsDead(owner: string): boolean {
  const [host, pidText] = owner.split("/");
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
