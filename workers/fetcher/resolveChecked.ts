import { promises as dns } from "node:dns";
import { isIP } from "node:net";
import { FetchError } from "./classify";
import { blockedAddressReason, blockedHostnameReason, ipLiteral } from "./ssrf";

/** Host name → every address it has. Injected in tests; the system resolver otherwise. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface AddressPolicy {
  /** The source may reach private addresses (a feed on the intranet, a test server). */
  allowPrivate: boolean;
  /**
   * Host names (not addresses) whose DNS answers may be private even when allowPrivate is off:
   * a narrower exception for one intranet name, and how tests reach their 127.0.0.1 server under
   * a name while every other hop is still checked. An IP-literal host is never excepted.
   */
  allowPrivateHosts?: readonly string[];
  resolver?: Resolver;
}

/**
 * The address one hop will dial, after the SSRF guard: the IP literal itself, or the first of
 * the name's addresses once every one of them passed. The caller pins the socket to it.
 */
export async function resolveChecked(
  url: URL,
  options: AddressPolicy,
  timeoutMs: number,
): Promise<string> {
  const excepted = options.allowPrivate || (options.allowPrivateHosts ?? []).includes(url.hostname);
  const guard = (address: string, mayBePrivate: boolean) => {
    if (!isIP(address)) throw new FetchError("dns", `${url.hostname} resolved to "${address}"`);
    const reason = mayBePrivate ? null : blockedAddressReason(address);
    if (reason) throw new FetchError("blocked_ssrf", `${url.host} refused: ${reason}`);
  };
  // An IP-literal host never reaches a lookup function, so it is checked here, not only there.
  const literal = ipLiteral(url);
  if (literal) {
    guard(literal, options.allowPrivate);
    return literal;
  }
  const nameReason = excepted ? null : blockedHostnameReason(url.hostname);
  if (nameReason) throw new FetchError("blocked_ssrf", `${url.host} refused: ${nameReason}`);
  const resolver = options.resolver ?? systemResolver;
  const wait = Math.max(0, timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  let addresses: string[];
  try {
    addresses = await Promise.race([
      resolver(url.hostname),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new FetchError("dns", `resolving ${url.hostname} took over ${wait} ms`)),
          wait,
        );
      }),
    ]);
  } catch (err) {
    if (err instanceof FetchError) throw err;
    throw new FetchError("dns", `cannot resolve ${url.hostname}: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw new FetchError("dns", `${url.hostname} has no addresses`);
  // Every address is checked, not only the one we dial: a name that answers both a public and a
  // private address is an attacker's name.
  for (const address of addresses) guard(address, excepted);
  return addresses[0] as string;
}
