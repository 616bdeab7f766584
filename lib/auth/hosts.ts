import { apiError } from "../api/respond";
import { type Config, config } from "../config";

/** Always answered: this machine's own names, whatever the settings say. */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/**
 * The host name of a Host header value, lower-cased, without its port ("[::1]:3000" → "[::1]"),
 * or null when it is not a plain host[:port] (a path, a user part or spaces mean someone is
 * playing games with it).
 */
export function hostName(host: string): string | null {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/i.exec(host.trim());
  return match?.[1] ? match[1].toLowerCase().replace(/\.$/, "") : null;
}

/**
 * The names this app answers to: loopback, WIREWATCH_URL's host, the WebSub callback's host (a
 * hub verifies and pushes to the public name it was given) and WIREWATCH_ALLOWED_HOSTS.
 */
export function allowedHostNames(
  settings: Pick<Config, "WIREWATCH_URL" | "WIREWATCH_ALLOWED_HOSTS"> &
    Partial<Pick<Config, "WIREWATCH_WEBSUB_CALLBACK_URL">>,
): Set<string> {
  const names = new Set(LOOPBACK_NAMES);
  if (settings.WIREWATCH_URL) names.add(new URL(settings.WIREWATCH_URL).hostname.toLowerCase());
  if (settings.WIREWATCH_WEBSUB_CALLBACK_URL) {
    names.add(new URL(settings.WIREWATCH_WEBSUB_CALLBACK_URL).hostname.toLowerCase());
  }
  for (const name of settings.WIREWATCH_ALLOWED_HOSTS) names.add(name.toLowerCase());
  return names;
}

/**
 * Null when the request was sent to a host this app answers to, else the 421 to answer. A page
 * on another site that rebinds its own name to 127.0.0.1 is same-origin with us in the browser's
 * eyes, but its requests still say `Host: its-name`: refusing that name is what keeps it from
 * reading the dashboard's data (docs/decisions/013).
 */
export function refuseForeignHost(
  request: Request,
  settings: Parameters<typeof allowedHostNames>[0] = config(),
): Response | null {
  // No Host header only in a request built by hand (HTTP/1.1 requires one; Next builds the URL
  // of an HTTP/1.0 one from its own host name).
  const host = request.headers.get("host") ?? new URL(request.url).host;
  const name = hostName(host);
  if (name !== null && allowedHostNames(settings).has(name)) return null;
  return apiError(
    421,
    "unknown_host",
    `this server does not answer to the host ${JSON.stringify(host)} (WIREWATCH_ALLOWED_HOSTS)`,
  );
}
