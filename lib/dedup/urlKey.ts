/**
 * Stage 1's key: one string for every address under which outlets publish the same article.
 * Stronger than lib/canonical.ts (seed 003's identity rule, which must not change): it also
 * folds what sites vary between their desktop, mobile and AMP renderings and what share buttons
 * append. It is only ever compared, never fetched.
 */

const HOST_PREFIX = /^(?:www\d*|m|mobile|amp)\./;
// Query keys that say who shared or which campaign sent the reader, never which article.
const TRACKING_EXACT = new Set([
  "fbclid",
  "gclid",
  "gclsrc",
  "dclid",
  "msclkid",
  "yclid",
  "twclid",
  "ttclid",
  "li_fat_id",
  "mc_cid",
  "mc_eid",
  "_ga",
  "_gl",
  "_hsenc",
  "_hsmi",
  "igshid",
  "igsh",
  "ref",
  "ref_src",
  "ref_url",
  "referrer",
  "cmpid",
  "ocid",
  "smid",
  "smtyp",
  "sr_share",
  "at_medium",
  "at_campaign",
  "at_custom1",
  "at_custom2",
  "at_custom3",
  "at_custom4",
  "s_cid",
  "spm",
  "amp",
  "outputtype",
  "amp_js_v",
  "usqp",
]);
const TRACKING_PREFIX = /^(?:utm_|pk_|mtm_|hsa_|oly_|vero_|at_)/;
// The AMP rendering of /path: /path/amp, /path/amp/, /path.amp, /amp/path.
const AMP_SUFFIX = /(?:\/amp|\.amp)$/;
const AMP_PREFIX = /^\/amp(?=\/)/;
const INDEX_FILE = /\/index\.(?:html?|php|aspx?|jsp)$/;

/**
 * The dedup key of a link: https, lower-case host without www./m./mobile./amp., no default
 * port, no AMP path or flag, no trailing index.html or slash, no fragment, no tracking
 * parameters, the rest sorted. Null for anything that is not an http(s) URL; never throws.
 */
export function urlKey(link: string | null | undefined): string | null {
  if (typeof link !== "string") return null;
  let u: URL;
  try {
    u = new URL(link.trim());
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  if (!u.hostname) return null;
  const host = u.hostname.toLowerCase().replace(/\.$/, "").replace(HOST_PREFIX, "");
  const port = u.port === "" || u.port === "80" || u.port === "443" ? "" : `:${u.port}`;
  let path = u.pathname.replace(/\/{2,}/g, "/");
  path = path.replace(/\/+$/, "");
  path = path.replace(INDEX_FILE, "");
  path = path.replace(AMP_SUFFIX, "").replace(AMP_PREFIX, "");
  path = path.replace(/\/+$/, "");
  const params = [...u.searchParams.entries()]
    .filter(([k]) => {
      const key = k.toLowerCase();
      return !TRACKING_EXACT.has(key) && !TRACKING_PREFIX.test(key);
    })
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const query = params.length ? `?${new URLSearchParams(params).toString()}` : "";
  return `https://${host}${port}${path || ""}${query}`;
}
