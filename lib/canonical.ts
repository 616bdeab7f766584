import { createHash } from "node:crypto";

// Seed 003's identity rules, kept to the letter: the same item must get the same key on every
// collector and every process, so nothing here may depend on locale or configuration.

const TRACKING = /^(utm_|fbclid$|gclid$|mc_cid$|mc_eid$)/i;

/**
 * The canonical form of a link: resolved against `base`, fragment dropped, host lower-cased,
 * trailing slashes trimmed from the path, tracking parameters removed and the rest sorted by
 * name. Throws a TypeError for a string that is not a URL.
 */
export function canonicalizeUrl(raw: string, base?: string): string {
  const u = new URL(raw.trim(), base);
  u.hash = "";
  u.hostname = u.hostname.toLowerCase();
  if (u.pathname !== "/") u.pathname = u.pathname.replace(/\/+$/, "");
  const params = [...u.searchParams.entries()]
    .filter(([k]) => !TRACKING.test(k))
    .sort(([a], [b]) => a.localeCompare(b));
  u.search = new URLSearchParams(params).toString();
  return u.toString();
}

export interface ItemIdentity {
  guid?: string | null;
  atomId?: string | null;
  link?: string | null;
  baseUrl?: string | null;
  title?: string | null;
  published?: string | null;
}

/**
 * The first stable identifier an item has: guid, atom:id, canonical link, then title|published.
 * Returns null when the item has none of them.
 */
export function canonicalId(item: ItemIdentity): string | null {
  const guid = item.guid?.trim();
  if (guid) return guid;
  const atomId = item.atomId?.trim();
  if (atomId) return atomId;
  if (item.link?.trim()) {
    try {
      return canonicalizeUrl(item.link, item.baseUrl ?? undefined);
    } catch {
      // an unparseable link is no identity; fall through to title|published
    }
  }
  const title = item.title?.trim();
  if (title) return `${title}|${item.published ?? ""}`;
  return null;
}

/** sha256(source_id | canonical_id), hex: the primary key of a news row. */
export function entryKey(sourceId: string, canonical: string): string {
  return createHash("sha256").update(`${sourceId}|${canonical}`, "utf8").digest("hex");
}
