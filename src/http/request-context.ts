import { uuidv7 } from "../ids";

/** Per-request facts the access log and error handler need, keyed by the Request object. */
export interface RequestInfo {
  id: string;
  startNs: number;
  route?: string;
  orgId?: string;
  /** The socket's peer address (dashboard sign-in limits count failures per address). */
  clientIp?: string;
}

const infos = new WeakMap<Request, RequestInfo>();
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export function beginRequest(request: Request, clientIp?: string): RequestInfo {
  const echoed = request.headers.get("x-request-id");
  const info = { id: echoed && REQUEST_ID_PATTERN.test(echoed) ? echoed : uuidv7(), startNs: Bun.nanoseconds(), clientIp };
  infos.set(request, info);
  return info;
}

export function requestInfo(request: Request): RequestInfo | undefined {
  return infos.get(request);
}
