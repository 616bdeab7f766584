import { bnNum } from "./corpus";
import type { Language } from "./outlets";
import type { Random } from "./random";

/**
 * How an item came to be, the answer key a dedup test grades against:
 * - `original`: the first publication of a story;
 * - `wire-copy`: another outlet's copy of the wire's story, title and summary byte-identical;
 * - `tracking`, `amp`, `host`: an aggregator's listing of someone else's item, its link the
 *   original's with tracking parameters, on an AMP URL, or on a `www.`/mobile host;
 * - `headline-edit`: another outlet's copy with the headline touched (a word, a number);
 * - `rewrite-en`, `rewrite-bn`: another desk's own wording of the same facts, headline and
 *   summary both: the pairs a near-match stage may miss and a meaning stage is for.
 */
export const REPUBLISH_KINDS = [
  "original",
  "wire-copy",
  "tracking",
  "amp",
  "host",
  "headline-edit",
  "rewrite-en",
  "rewrite-bn",
] as const;
export type RepublishKind = (typeof REPUBLISH_KINDS)[number];

/** The kinds whose link names the same page as their original: a URL stage's to settle. */
export const LINK_KINDS: readonly RepublishKind[] = ["tracking", "amp", "host"];

export const rewriteKind = (language: Language): RepublishKind =>
  language === "bn" ? "rewrite-bn" : "rewrite-en";

const IP_HOST = /^(\d+\.){3}\d+$|^\[/;

/**
 * The original's link as an aggregator or a social share carries it: same page, other address.
 * Host variants need a host name: on an IP address (the simulator's default links) an `amp`
 * re-visit uses the path or the query instead, and a `host` one falls back to `amp`.
 */
export function variantLink(
  link: string,
  kind: "tracking" | "amp" | "host",
  random: Random,
): { link: string; kind: "tracking" | "amp" | "host" } {
  const u = new URL(link);
  const named = !IP_HOST.test(u.hostname);
  if (kind === "host" && !named) return variantLink(link, "amp", random);
  if (kind === "tracking") {
    // What share buttons and newsletters append; canonicalisation and the URL key both drop them.
    const style = random.int(0, 2);
    if (style === 0) {
      u.searchParams.set("utm_source", random.pick(["digest", "twitter", "newsletter"]));
      u.searchParams.set("utm_medium", "referral");
      u.searchParams.set("utm_campaign", `d${random.int(1, 999)}`);
    } else if (style === 1) {
      u.searchParams.set("fbclid", `IwAR${random.int(100_000, 999_999).toString(36)}`);
    } else {
      u.searchParams.set("utm_source", "digest");
      u.searchParams.set("gclid", `Cj0K${random.int(100_000, 999_999).toString(36)}`);
    }
    return { link: u.toString(), kind };
  }
  if (kind === "amp") {
    const styles = named ? 3 : 2;
    const style = random.int(0, styles - 1);
    if (style === 0) u.pathname = `/amp${u.pathname}`;
    else if (style === 1) u.searchParams.set("amp", "1");
    else u.hostname = `amp.${u.hostname.replace(/^www\./, "")}`;
    return { link: u.toString(), kind };
  }
  // host: the other of www./bare, or the mobile site.
  const bare = u.hostname.replace(/^www\./, "");
  u.hostname = random.chance(0.5) ? `m.${bare}` : bare === u.hostname ? `www.${bare}` : bare;
  return { link: u.toString(), kind };
}

// Headline verbs a sub-editor swaps for another of the same meaning, both directions.
const SWAPS: Record<Language, [string, string][]> = {
  en: [
    ["rises", "climbs"],
    ["falls", "drops"],
    ["raises", "hikes"],
    ["cuts", "lowers"],
    ["gains", "adds"],
    ["jump", "surge"],
    ["slip", "dip"],
    ["shares", "stock"],
    ["strands", "traps"],
    ["beat", "defeat"],
    ["sets", "schedules"],
    ["villages", "hamlets"],
  ],
  bn: [
    ["বেড়েছে", "বাড়ল"],
    ["কমেছে", "কমল"],
    ["বাড়াল", "বাড়িয়েছে"],
    ["কমাল", "কমিয়েছে"],
    ["হারাল", "হারিয়েছে"],
    ["আটকা", "আটকে আছে"],
    ["ঘোষণা", "প্রকাশ"],
    ["প্লাবিত", "জলমগ্ন"],
  ],
};

const LATIN_NUMBER = /\d+(\.\d+)?/g;
const BN_NUMBER = /[০-৯]+(\.[০-৯]+)?/g;
const BN_DIGITS = "০১২৩৪৫৬৭৮৯";

const fromBn = (s: string) => s.replace(/[০-৯]/g, (d) => String(BN_DIGITS.indexOf(d)));

/** A figure brought up to date: a decimal by a tenth, a whole number by one or two. */
function bump(figure: string, random: Random): string {
  const step = random.int(1, 2);
  if (figure.includes(".")) {
    const places = figure.split(".")[1]?.length ?? 1;
    return (Number(figure) + step / 10 ** places).toFixed(places);
  }
  return String(Number(figure) + step);
}

/**
 * The headline as another desk runs it: a figure updated or one word swapped. Always returns a
 * different string (a tag word is added when neither applies).
 */
export function editHeadline(title: string, language: Language, random: Random): string {
  const pattern = language === "bn" ? BN_NUMBER : LATIN_NUMBER;
  const figures = [...title.matchAll(pattern)];
  // Whole words only: a Bangla word inflects by suffix (প্রকাশ, প্রকাশের), and a swap inside
  // one would leave a vowel sign on the wrong consonant.
  const words = new Set(title.split(/\s+/));
  const swaps = SWAPS[language].flatMap(([a, b]) => [
    ...(words.has(a) ? [[a, b] as const] : []),
    ...(words.has(b) ? [[b, a] as const] : []),
  ]);
  const useFigure = figures.length > 0 && (swaps.length === 0 || random.chance(0.5));
  if (useFigure) {
    const m = random.pick(figures);
    const at = m.index ?? 0;
    const raw = language === "bn" ? fromBn(m[0]) : m[0];
    const next = bump(raw, random);
    const shown = language === "bn" ? bnNum(next) : next;
    return title.slice(0, at) + shown + title.slice(at + m[0].length);
  }
  if (swaps.length > 0) {
    const [from, to] = random.pick(swaps);
    return title
      .split(/(\s+)/)
      .map((w) => (w === from ? to : w))
      .join("");
  }
  // The wire-style update tag, in the paper's language.
  return language === "bn" ? `${title} (হালনাগাদ)` : `UPDATE 1-${title}`;
}
