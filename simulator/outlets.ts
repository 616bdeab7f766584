export type Language = "en" | "bn";
export type FeedFormat = "rss2" | "rdf" | "atom";

/** A newsroom the simulator runs: what it writes in and how it publishes. */
export interface Outlet {
  id: string;
  name: string;
  /** Languages it publishes in; a wire service writes both. */
  languages: Language[];
  /** Feeds it serves, each its own source (`<id>-rss`, `<id>-rdf`, `<id>-atom`). */
  feeds: FeedFormat[];
  /** Serves the authoritative primary stream (source `<id>`) and its history. */
  stream?: boolean;
  /** Its rendered page is listed as a source (`<id>-page`); every outlet's page is served. */
  listPage?: boolean;
  /** Share of original stories it breaks, relative to the other outlets. */
  weight: number;
  /** Writes nothing of its own: lists other outlets' stories, linking their pages (with
   * tracking parameters, AMP or mobile addresses), under its own guids. */
  aggregator?: boolean;
}

// Two English and two Bangla papers plus a bilingual wire, so every feed format, the primary
// stream, the fallback page and both languages are exercised by the default configuration; and
// an aggregator, whose listings are other outlets' stories under other addresses.
export const DEFAULT_OUTLETS: readonly Outlet[] = [
  {
    id: "wire",
    name: "Northline Wire",
    languages: ["en", "bn"],
    feeds: [],
    stream: true,
    listPage: true,
    weight: 4,
  },
  { id: "meridian", name: "The Meridian Times", languages: ["en"], feeds: ["rss2"], weight: 2 },
  {
    id: "harbour",
    name: "Harbour Post",
    languages: ["en"],
    feeds: ["rss2", "atom"],
    weight: 1.5,
  },
  { id: "ledger", name: "দৈনিক লেজার", languages: ["bn"], feeds: ["rss2"], weight: 2 },
  { id: "padma", name: "পদ্মা বার্তা", languages: ["bn"], feeds: ["rss2", "rdf"], weight: 1.5 },
  {
    id: "digest",
    name: "Morning Digest",
    languages: ["en", "bn"],
    feeds: ["rss2"],
    weight: 0,
    aggregator: true,
  },
];

export const FEED_SUFFIX: Record<FeedFormat, string> = { rss2: "rss", rdf: "rdf", atom: "atom" };
export const FEED_FORMATS = Object.keys(FEED_SUFFIX) as FeedFormat[];
