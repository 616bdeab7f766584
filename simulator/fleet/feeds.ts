import {
  detailSentence,
  randomFacts,
  rewriteSummary,
  storySummary,
  type Topic,
  topicsIn,
} from "../corpus";
import type { SimStory } from "../newsroom";
import type { Language, Outlet } from "../outlets";
import { Random } from "../random";
import { FEED_CONTENT_TYPE, renderFeed } from "../render/feeds";
import { rfc822 } from "../render/xml";
import { editHeadline, type RepublishKind, rewriteKind, variantLink } from "../republish";
import { hash, unit } from "./hash";
import {
  type FeedProfile,
  type FleetPlan,
  feedId,
  hostAddress,
  hostOf,
  POOL_SLOT_MS,
  TAG,
} from "./plan";

/**
 * A fleet feed's items, made up on each request from (seed, feed, slot): time is cut into the
 * feed's slots and each slot holds an item or not by a hash, at an offset by another hash. Its
 * last items are found by walking back from the current slot, so nothing is stored per feed and
 * a document depends only on its newest slot: that slot names the ETag, and a conditional GET
 * is answered 304 without rendering anything.
 */

/** One slot that holds an item, and when the item appears. */
export interface ItemSlot {
  slot: number;
  at: number;
}

/** The feed's base URL: its host's loopback address and the fleet's port. */
export const feedBase = (plan: FleetPlan, index: number): string =>
  `http://${hostAddress(hostOf(plan, index))}:${plan.port}`;

export const feedUrl = (plan: FleetPlan, index: number): string =>
  `${feedBase(plan, index)}/f/${index}/feed.xml`;

function slotAt(plan: FleetPlan, f: FeedProfile, slot: number): ItemSlot | null {
  if (unit(plan.seed, f.index, slot, TAG.exists) >= f.p) return null;
  return {
    slot,
    at: slot * f.slotMs + Math.floor(unit(plan.seed, f.index, slot, TAG.offset) * f.slotMs),
  };
}

/**
 * The newest `limit` items visible at `now`, newest first. The walk back is bounded from the
 * newest item (four times the expected distance, at least 8 slots), so what lies beyond the
 * walk never depends on `now`: two requests with the same newest slot get the same body.
 */
export function itemSlots(plan: FleetPlan, f: FeedProfile, now: number, limit: number): ItemSlot[] {
  const out: ItemSlot[] = [];
  const reach = Math.ceil((4 * Math.max(limit, 1)) / f.p) + 8;
  let slot = Math.floor(now / f.slotMs);
  let stop = slot - reach;
  for (; slot >= stop && out.length < limit; slot--) {
    const item = slotAt(plan, f, slot);
    if (!item || item.at > now) continue;
    if (out.length === 0) stop = slot - reach;
    out.push(item);
  }
  return out;
}

/** The validators of the document served at `now`, with no rendering. */
export function feedValidators(
  plan: FleetPlan,
  f: FeedProfile,
  now: number,
  fingerprint: string,
): { etag: string; lastModified: string; updated: number } {
  const newest = itemSlots(plan, f, now, 1)[0];
  const updated = newest?.at ?? 0;
  const newestName = newest ? newest.slot.toString(36) : "none";
  return {
    etag: `"${f.index.toString(36)}-${newestName}-${fingerprint}"`,
    // HTTP dates have whole seconds; the body's own timestamp keeps the milliseconds.
    lastModified: rfc822(Math.floor(updated / 1000) * 1000),
    updated,
  };
}

// How a feed words a pooled story: most copy the wire's words, some touch the headline, some
// rewrite it, and some list it under the original's link with tracking or AMP, as aggregators do.
const COPY_KINDS: readonly (readonly ["copy" | "edit" | "rewrite" | "tracking" | "amp", number])[] =
  [
    ["copy", 0.5],
    ["edit", 0.2],
    ["rewrite", 0.15],
    ["tracking", 0.1],
    ["amp", 0.05],
  ];

const headline = (topic: Topic, language: Language, variant: number, facts: SimStory["facts"]) => {
  const phrases = topic.headlines[language] ?? [];
  return phrases[variant % Math.max(1, phrases.length)]?.(facts) ?? topic.key;
};

interface PoolStory {
  key: string;
  /** As the wire words it: what a plain copy carries word for word. */
  title: string;
  summary: string;
  topic: Topic;
  facts: SimStory["facts"];
  variant: number;
  origin: number;
  link: string;
}

/** Story `j` of the common pool of window `window` in `language`: a function of the seed alone. */
export function poolStory(
  plan: FleetPlan,
  language: Language,
  window: number,
  j: number,
): PoolStory {
  const r = new Random(hash(plan.seed, window, j * 2 + (language === "bn" ? 1 : 0), TAG.pool));
  const topic = r.pick(topicsIn(language));
  const facts = randomFacts(r);
  const variant = r.int(0, (topic.headlines[language]?.length ?? 1) - 1);
  const origin = r.int(0, plan.size - 1);
  const key = `p${window}-${language}-${j}`;
  return {
    key,
    title: headline(topic, language, variant, facts),
    summary: storySummary(topic, facts, language),
    topic,
    facts,
    variant,
    origin,
    link: `${feedBase(plan, origin)}/a/${origin}/${key}`,
  };
}

/** What differs between an original and a copy; the rest of an item follows from its slot. */
interface Wording {
  link: string;
  title: string;
  summary: string;
  topic: Topic;
  facts: SimStory["facts"];
  variant: number;
  storyKey: string;
  how: RepublishKind;
}

/** The item in slot `s` of feed `f`. */
export function fleetItem(plan: FleetPlan, f: FeedProfile, s: ItemSlot): SimStory {
  const r = new Random(hash(plan.seed, f.index, s.slot, TAG.item));
  const own = `${feedBase(plan, f.index)}/a/${f.index}/${s.slot}`;
  const w = r.chance(plan.republishShare)
    ? copyWording(plan, f, s, r, own)
    : original(f, s, r, own);
  // One literal of fixed shape: built by spreading, an item this wide costs several times more.
  return {
    outlet: feedId(plan, f.index),
    number: s.slot,
    guid: own,
    link: w.link,
    title: w.title,
    summary: pad(plan, f, s, w.summary),
    category: w.topic.category,
    breaking: false,
    instruments: w.topic.instruments,
    language: f.language,
    publishedAt: s.at,
    updatedAt: s.at,
    revision: 1,
    retractedAt: null,
    pageVisibleAt: s.at,
    pageStale: null,
    streamAt: null,
    storyKey: w.storyKey,
    topic: w.topic.key,
    variant: w.variant,
    facts: w.facts,
    how: w.how,
    // A pooled original is nobody's item: copies share only its storyKey.
    copyOf: null,
  };
}

function original(f: FeedProfile, s: ItemSlot, r: Random, own: string): Wording {
  const lang = f.language;
  const topic = r.pick(topicsIn(lang));
  const facts = randomFacts(r);
  const variant = r.int(0, (topic.headlines[lang]?.length ?? 1) - 1);
  return {
    link: own,
    title: headline(topic, lang, variant, facts),
    summary: storySummary(topic, facts, lang),
    topic,
    facts,
    variant,
    storyKey: `f${f.index}-${s.slot}`,
    how: "original",
  };
}

function copyWording(
  plan: FleetPlan,
  f: FeedProfile,
  s: ItemSlot,
  r: Random,
  own: string,
): Wording {
  const lang = f.language;
  const story = poolStory(
    plan,
    lang,
    Math.floor(s.at / POOL_SLOT_MS),
    r.int(0, plan.poolSize[lang] - 1),
  );
  const [kind] = r.weighted(COPY_KINDS, ([, w]) => w);
  const w: Wording = {
    link: own,
    title: story.title,
    summary: story.summary,
    topic: story.topic,
    facts: story.facts,
    variant: story.variant,
    storyKey: story.key,
    how: "wire-copy",
  };
  const phrases = story.topic.headlines[lang]?.length ?? 1;
  if (kind === "edit") {
    w.how = "headline-edit";
    w.title = editHeadline(story.title, lang, r);
  } else if (kind === "rewrite" && phrases > 1) {
    w.how = rewriteKind(lang);
    w.variant = (story.variant + r.int(1, phrases - 1)) % phrases;
    w.title = headline(story.topic, lang, w.variant, story.facts);
    w.summary = rewriteSummary(story.topic, story.facts, lang);
  } else if (kind === "tracking" || kind === "amp") {
    const v = variantLink(story.link, kind, r);
    w.how = v.kind;
    w.link = v.link;
  }
  return w;
}

/**
 * A large feed carries full text: the summary plus detail sentences up to its share of the
 * document's target size. Sixteen distinct sentences per item, repeated, keep a 3 MB document
 * to a few milliseconds of work.
 */
function pad(plan: FleetPlan, f: FeedProfile, s: ItemSlot, summary: string): string {
  if (f.largeBytes === 0) return summary;
  const want = f.largeBytes / plan.itemsPerFeed;
  const facts = randomFacts(new Random(hash(plan.seed, f.index, s.slot, TAG.pad)));
  const sentences = Array.from({ length: 16 }, (_, n) =>
    detailSentence(
      { ...facts, detail: hash(plan.seed, f.index, s.slot * 16 + n, TAG.pad) },
      f.language,
    ),
  );
  const parts = [summary];
  let bytes = Buffer.byteLength(summary);
  for (let n = 0; bytes < want; n++) {
    const sentence = sentences[n % sentences.length] as string;
    parts.push(sentence);
    bytes += Buffer.byteLength(sentence) + 1;
  }
  return parts.join(" ");
}

/** The items served at `now`, newest first. */
export function fleetItems(plan: FleetPlan, f: FeedProfile, now: number): SimStory[] {
  return itemSlots(plan, f, now, plan.itemsPerFeed).map((s) => fleetItem(plan, f, s));
}

const PLACES = ["Sylhet", "Rangpur", "Khulna", "Barishal", "Cumilla", "Bogura", "Jashore", "Pabna"];
const TITLES = [
  "Observer",
  "Courier",
  "Herald",
  "Sentinel",
  "Gazette",
  "Dispatch",
  "Chronicle",
  "Post",
];

/** The feed's outlet: a name, its language and its one feed format. */
export function fleetOutlet(plan: FleetPlan, f: FeedProfile): Outlet {
  const h = hash(plan.seed, f.index, 0, TAG.item);
  return {
    id: feedId(plan, f.index),
    name: `${PLACES[h % PLACES.length]} ${TITLES[(h >>> 8) % TITLES.length]} ${f.index}`,
    languages: [f.language],
    feeds: [f.format],
    weight: 0,
  };
}

/** The document served at `now`. */
export function renderFleetFeed(
  plan: FleetPlan,
  f: FeedProfile,
  now: number,
): { body: string; contentType: string; updated: number } {
  const items = fleetItems(plan, f, now);
  const updated = items[0]?.publishedAt ?? 0;
  const body = renderFeed(f.format, {
    outlet: fleetOutlet(plan, f),
    selfUrl: feedUrl(plan, f.index),
    homeUrl: `${feedBase(plan, f.index)}/`,
    items,
    updated,
  });
  return { body, contentType: FEED_CONTENT_TYPE[f.format], updated };
}
