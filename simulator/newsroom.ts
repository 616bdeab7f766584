import {
  type Facts,
  randomFacts,
  rewriteSummary,
  storySummary,
  TOPICS,
  type Topic,
  topicsIn,
} from "./corpus";
import type { Language, Outlet } from "./outlets";
import type { Random } from "./random";
import { editHeadline, type RepublishKind, rewriteKind, variantLink } from "./republish";
import type { Scheduler } from "./scheduler";

/** One outlet's copy of a story, as it stands now. */
export interface SimStory {
  outlet: string;
  number: number;
  /** Stable per outlet. A stream outlet's guid is its permalink, so a page observation (title and
   * link only) and a stream observation of the same story share a canonical id. */
  guid: string;
  link: string;
  title: string;
  summary: string;
  category: string;
  breaking: boolean;
  instruments: string[];
  language: Language;
  publishedAt: number;
  updatedAt: number;
  /** 1 at publication, +1 per edit and for the retraction. */
  revision: number;
  retractedAt: number | null;
  /** When the outlet's rendered page starts to list it. */
  pageVisibleAt: number;
  /** After an edit the page keeps the old title a little longer (its render cache), so a late
   * page observation carries older, thinner data than the stream: seed 000's step 6. */
  pageStale: { title: string; until: number } | null;
  /** When the primary stream carries it (stream outlets only). */
  streamAt: number | null;
  /** Shared by every outlet's copy of the same news, worded differently: the dedup answer key. */
  storyKey: string;
  topic: string;
  variant: number;
  facts: Facts;
  /** How this copy came to be (the answer key's second half; see republish.ts). */
  how: RepublishKind;
  /** The outlet's story this one was made from; null for an original. */
  copyOf: { outlet: string; number: number } | null;
}

interface StreamEventBase {
  /** Increases by one per event across the whole simulator; also the SSE `id:`. */
  seq: number;
  source: string;
  /** When the stream emitted it (ISO 8601). */
  at: string;
  guid: string;
  link: string;
  revision: number;
}

export interface StreamItemEvent extends StreamEventBase {
  type: "item";
  title: string;
  summary: string;
  category: string;
  breaking: boolean;
  instruments: string[];
  language: Language;
  publishedAt: string;
  updatedAt: string;
}

export interface StreamRetractionEvent extends StreamEventBase {
  type: "retraction";
  retractedAt: string;
}

export type StreamEvent = StreamItemEvent | StreamRetractionEvent;

/** What a rendered page shows of a story: nothing but its headline and link. */
export interface PageHeadline {
  title: string;
  link: string;
  language: Language;
}

export interface EditInput {
  title?: string;
  summary?: string;
  /** A story can escalate to breaking (never back: outlets do not un-break news). */
  breaking?: true;
  /** How long the page keeps showing the old title (default 1–5 s, made up). */
  pageLagMs?: number;
}

export interface PublishInput {
  /** Outlet id; the first stream outlet by default. */
  outlet?: string;
  title?: string;
  summary?: string;
  category?: string;
  breaking?: boolean;
  instruments?: string[];
  language?: Language;
  /** Show it on the page this many ms before the stream carries it (seed 000's race). */
  pageLeadMs?: number;
}

export interface NewsroomOptions {
  random: Random;
  scheduler: Scheduler;
  outlets: readonly Outlet[];
  baseUrl: string;
  /** Where an outlet's story links point (default: the simulator's own address, so they resolve). */
  linkBase?: (outletId: string) => string;
  /** Original stories per minute across all outlets (republications come on top). */
  ratePerMinute: number;
  /** Mean time between breaking bursts; 0 turns bursts off. */
  burstEveryMs: number;
  /** How far the page leads the stream when it wins the race; 28 ms as in seed 000. */
  pageLeadMs: number;
  /** Share of stream stories whose page shows them first. */
  pageLeadShare: number;
  /** A quiet period: the outlet publishes nothing on its own. */
  isQuiet: (outletId: string) => boolean;
}

// Kept history per stream: at the default rate this is well over an hour, more than any
// reconnect gap worth backfilling; older gaps are reported as truncated.
const HISTORY_LIMIT = 1_000;
const FEED_ITEMS = 30;

const EDIT_SHARE = 0.12;
const RETRACT_SHARE = 0.02;
// Per outlet that could: papers run half of the wire's stories, but pick up a rival's own story
// only now and then; breaking news is everywhere.
const WIRE_SYNDICATE_SHARE = 0.5;
const SYNDICATE_SHARE = 0.2;
const BREAKING_SHARE = 0.05;
// How a paper republishes the wire's story: mostly verbatim, as real papers run wire copy; some
// desks touch the headline, a few rewrite it. A paper's own story is never copied verbatim by a
// rival: it is rewritten, or its headline is lifted and edited.
const FROM_WIRE: readonly [RepublishKind | "rewrite", number][] = [
  ["wire-copy", 0.75],
  ["headline-edit", 0.15],
  ["rewrite", 0.1],
];
const FROM_PAPER: readonly [RepublishKind | "rewrite", number][] = [
  ["headline-edit", 0.35],
  ["rewrite", 0.65],
];
// An aggregator lists one original story in eight (most breaking ones) and a few copies, linking
// the outlet's page with tracking parameters, on its AMP address or on another host name.
const AGGREGATE_SHARE = 0.12;
const AGGREGATE_BREAKING_SHARE = 0.6;
const AGGREGATE_COPY_SHARE = 0.03;
const AGGREGATE_KINDS: readonly ["tracking" | "amp" | "host", number][] = [
  ["tracking", 0.45],
  ["amp", 0.35],
  ["host", 0.2],
];

export class Newsroom {
  readonly #o: NewsroomOptions;
  readonly #stories = new Map<string, SimStory[]>();
  readonly #byGuid = new Map<string, SimStory>();
  readonly #lastChanged = new Map<string, number>();
  readonly #history = new Map<string, StreamEvent[]>();
  readonly #listeners = new Set<(event: StreamEvent) => void>();
  /** The newest event each stream's history has let go of. */
  readonly #dropped = new Map<string, StreamEvent>();
  #seq = 0;
  #storyKeys = 0;
  #rate: number;
  #arrivalGeneration = 0;
  /** Per topic, the subject its next organic story is about (see #nextFacts). */
  readonly #beats = new Map<string, number>();

  constructor(options: NewsroomOptions) {
    this.#o = options;
    this.#rate = options.ratePerMinute;
    for (const outlet of options.outlets) {
      this.#stories.set(outlet.id, []);
      this.#lastChanged.set(outlet.id, options.scheduler.now);
      if (outlet.stream) this.#history.set(outlet.id, []);
    }
    this.#scheduleArrival();
    this.#scheduleBurst();
  }

  get rate(): number {
    return this.#rate;
  }

  outlet(id: string): Outlet {
    const outlet = this.#o.outlets.find((o) => o.id === id);
    if (!outlet) throw new SimError(`unknown outlet "${id}"`);
    return outlet;
  }

  setRate(perMinute: number): void {
    if (!(perMinute >= 0 && perMinute <= 6_000)) {
      throw new SimError("rate must be between 0 and 6000 stories per minute");
    }
    this.#rate = perMinute;
    this.#scheduleArrival();
  }

  onEvent(listener: (event: StreamEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Every story of an outlet, retracted ones included, oldest first. */
  stories(outletId: string): readonly SimStory[] {
    return this.#stories.get(outletId) ?? [];
  }

  story(outletId: string, guid: string): SimStory {
    const story = this.#byGuid.get(`${outletId} ${guid}`);
    if (!story) throw new SimError(`no story "${guid}" at outlet "${outletId}"`);
    return story;
  }

  /** What the outlet's feed lists now: live stories, newest first. */
  feedItems(outletId: string): SimStory[] {
    const now = this.#o.scheduler.now;
    return this.stories(outletId)
      .filter((s) => s.retractedAt === null && s.publishedAt <= now)
      .sort((a, b) => b.publishedAt - a.publishedAt || b.number - a.number)
      .slice(0, FEED_ITEMS);
  }

  /** What the outlet's rendered page lists now. */
  pageItems(outletId: string): PageHeadline[] {
    const now = this.#o.scheduler.now;
    return this.stories(outletId)
      .filter((s) => s.retractedAt === null && s.pageVisibleAt <= now)
      .sort((a, b) => b.pageVisibleAt - a.pageVisibleAt || b.number - a.number)
      .slice(0, FEED_ITEMS)
      .map((s) => ({
        title: s.pageStale && now < s.pageStale.until ? s.pageStale.title : s.title,
        link: s.link,
        language: s.language,
      }));
  }

  /** When anything the outlet's feed shows last changed (Last-Modified). */
  lastChanged(outletId: string): number {
    return this.#lastChanged.get(outletId) ?? 0;
  }

  /**
   * The stream's kept events after an event seq or after an instant (epoch ms), and whether
   * events in that range were already dropped, so the gap cannot be filled from here.
   */
  history(
    outletId: string,
    after: { seq: number } | { ms: number },
  ): { events: StreamEvent[]; truncated: boolean } {
    const kept = this.#history.get(outletId);
    if (!kept) throw new SimError(`outlet "${outletId}" has no stream`);
    const dropped = this.#dropped.get(outletId);
    if ("seq" in after) {
      return {
        events: kept.filter((e) => e.seq > after.seq),
        truncated: dropped !== undefined && dropped.seq > after.seq,
      };
    }
    return {
      events: kept.filter((e) => Date.parse(e.at) > after.ms),
      truncated: dropped !== undefined && Date.parse(dropped.at) > after.ms,
    };
  }

  lastSeq(): number {
    return this.#seq;
  }

  /** Publishes a story now; fields left out are made up like any other story. */
  publish(input: PublishInput = {}): SimStory {
    const outlet = this.outlet(input.outlet ?? this.#defaultOutlet().id);
    const language = input.language ?? this.#o.random.pick(outlet.languages);
    const topic =
      TOPICS.find((t) => t.category === input.category && t.headlines[language]) ??
      this.#o.random.pick(topicsIn(language).length ? topicsIn(language) : TOPICS);
    const story = this.#create(outlet, topic, randomFacts(this.#o.random), language, {
      breaking: input.breaking ?? false,
      pageLeadMs: input.pageLeadMs ?? 0,
      syndicate: false,
    });
    if (input.title !== undefined) story.title = input.title;
    if (input.summary !== undefined) story.summary = input.summary;
    if (input.category !== undefined) story.category = input.category;
    if (input.instruments !== undefined) story.instruments = [...input.instruments];
    return story;
  }

  /** Edits a story now: a new title (given or reworded) and revision + 1. */
  edit(outletId: string, guid: string, changes: EditInput = {}): SimStory {
    const story = this.story(outletId, guid);
    if (story.retractedAt !== null) throw new SimError(`story "${guid}" is retracted`);
    const now = this.#o.scheduler.now;
    const lag = changes.pageLagMs ?? this.#o.random.int(1_000, 5_000);
    story.pageStale = { title: story.title, until: now + lag };
    story.title = changes.title ?? this.#reword(story);
    if (changes.summary !== undefined) story.summary = changes.summary;
    if (changes.breaking) story.breaking = true;
    story.revision += 1;
    story.updatedAt = now;
    this.#lastChanged.set(outletId, now);
    if (story.streamAt !== null && story.streamAt <= now) this.#emit(story, "item");
    return story;
  }

  retract(outletId: string, guid: string): SimStory {
    const story = this.story(outletId, guid);
    if (story.retractedAt !== null) return story;
    const now = this.#o.scheduler.now;
    story.retractedAt = now;
    story.revision += 1;
    story.updatedAt = now;
    this.#lastChanged.set(outletId, now);
    if (story.streamAt !== null && story.streamAt <= now) this.#emit(story, "retraction");
    return story;
  }

  #defaultOutlet(): Outlet {
    return this.#o.outlets.find((o) => o.stream) ?? this.outlet(this.#o.outlets[0]?.id ?? "");
  }

  #create(
    outlet: Outlet,
    topic: Topic,
    facts: Facts,
    language: Language,
    how: {
      breaking: boolean;
      pageLeadMs?: number;
      syndicate: boolean;
      storyKey?: string;
      variant?: number;
      how?: RepublishKind;
      copyOf?: SimStory;
    },
  ): SimStory {
    const { random, scheduler, baseUrl } = this.#o;
    const now = scheduler.now;
    const list = this.#stories.get(outlet.id) as SimStory[];
    const number = list.length + 1;
    const link = `${this.#o.linkBase?.(outlet.id) ?? baseUrl}/o/${outlet.id}/${number}`;
    const phrases = topic.headlines[language] ?? [];
    const variant = how.variant ?? random.int(0, phrases.length - 1);
    // The page wins the race for a share of stream stories; otherwise it lags the stream by the
    // time a real site takes to re-render (a fraction of a second to a few seconds).
    const pageLeads =
      how.pageLeadMs !== undefined ? how.pageLeadMs > 0 : random.chance(this.#o.pageLeadShare);
    const lead = how.pageLeadMs ?? this.#o.pageLeadMs;
    const story: SimStory = {
      outlet: outlet.id,
      number,
      guid: outlet.stream ? link : `tag:${outlet.id}.sim,2026:story-${number}`,
      link,
      title: phrases[variant % phrases.length]?.(facts) ?? topic.key,
      summary: storySummary(topic, facts, language),
      category: topic.category,
      breaking: how.breaking,
      instruments: [...topic.instruments],
      language,
      publishedAt: now,
      updatedAt: now,
      revision: 1,
      retractedAt: null,
      pageVisibleAt: now,
      pageStale: null,
      streamAt: null,
      storyKey: how.storyKey ?? `story-${++this.#storyKeys}`,
      topic: topic.key,
      variant,
      facts: { ...facts },
      how: how.how ?? "original",
      copyOf: how.copyOf ? { outlet: how.copyOf.outlet, number: how.copyOf.number } : null,
    };
    if (outlet.stream) {
      story.streamAt = pageLeads ? now + lead : now;
      if (!pageLeads && how.pageLeadMs === undefined)
        story.pageVisibleAt = now + random.int(300, 3_000);
      scheduler.at(story.streamAt, () => {
        if (story.retractedAt === null) this.#emit(story, "item");
      });
    }
    list.push(story);
    this.#byGuid.set(`${outlet.id} ${story.guid}`, story);
    this.#lastChanged.set(outlet.id, now);
    if (how.syndicate) this.#followUps(story, topic);
    return story;
  }

  /** Later life of an organic story: maybe edited, maybe retracted, maybe republished. */
  #followUps(story: SimStory, topic: Topic): void {
    const { random, scheduler } = this.#o;
    if (random.chance(EDIT_SHARE)) {
      scheduler.after(random.int(20_000, 300_000), () => {
        if (story.retractedAt === null && !this.#o.isQuiet(story.outlet)) {
          // One edit in five escalates the story: the breaking flag's false → true upgrade.
          this.edit(story.outlet, story.guid, random.chance(0.2) ? { breaking: true } : {});
        }
      });
    }
    if (random.chance(RETRACT_SHARE)) {
      scheduler.after(random.int(60_000, 600_000), () => {
        if (!this.#o.isQuiet(story.outlet)) this.retract(story.outlet, story.guid);
      });
    }
    const fromWire = this.outlet(story.outlet).stream === true;
    const share = story.breaking ? 0.9 : fromWire ? WIRE_SYNDICATE_SHARE : SYNDICATE_SHARE;
    const others = this.#o.outlets.filter(
      (o) => o.id !== story.outlet && !o.aggregator && o.languages.includes(story.language),
    );
    for (const other of others) {
      if (!random.chance(share)) continue;
      scheduler.after(random.int(5_000, 90_000), () => {
        if (story.retractedAt !== null || this.#o.isQuiet(other.id)) return;
        const kind = random.weighted(fromWire ? FROM_WIRE : FROM_PAPER, ([, w]) => w)[0];
        const copy = this.#republish(story, other, topic, kind);
        this.#aggregate(copy, topic, AGGREGATE_COPY_SHARE);
      });
    }
    this.#aggregate(story, topic, story.breaking ? AGGREGATE_BREAKING_SHARE : AGGREGATE_SHARE);
  }

  /** Another outlet's copy of a story, made the way `kind` says. */
  #republish(
    story: SimStory,
    other: Outlet,
    topic: Topic,
    kind: RepublishKind | "rewrite",
  ): SimStory {
    const { random } = this.#o;
    const base = {
      breaking: story.breaking,
      syndicate: false,
      storyKey: story.storyKey,
      copyOf: story,
    };
    if (kind === "rewrite") {
      const phrases = topic.headlines[story.language] ?? [];
      // Another desk words the same facts its own way: a different phrasing when there is one.
      const variant =
        (story.variant + random.int(1, Math.max(1, phrases.length - 1))) % phrases.length;
      const copy = this.#create(other, topic, story.facts, story.language, {
        ...base,
        variant,
        how: rewriteKind(story.language),
      });
      copy.summary = rewriteSummary(topic, story.facts, story.language);
      return copy;
    }
    const copy = this.#create(other, topic, story.facts, story.language, {
      ...base,
      variant: story.variant,
      how: kind,
    });
    // Copied as it stands now: an edit the original had before the copy is in it.
    copy.title =
      kind === "headline-edit" ? editHeadline(story.title, story.language, random) : story.title;
    copy.summary = story.summary;
    copy.category = story.category;
    copy.instruments = [...story.instruments];
    return copy;
  }

  /** Maybe an aggregator lists the story, linking the outlet's own page by another address. */
  #aggregate(story: SimStory, topic: Topic, share: number): void {
    const { random, scheduler } = this.#o;
    for (const aggregator of this.#o.outlets) {
      if (!aggregator.aggregator || !aggregator.languages.includes(story.language)) continue;
      if (!random.chance(share)) continue;
      scheduler.after(random.int(10_000, 120_000), () => {
        if (story.retractedAt !== null || this.#o.isQuiet(aggregator.id)) return;
        const want = random.weighted(AGGREGATE_KINDS, ([, w]) => w)[0];
        const { link, kind } = variantLink(story.link, want, random);
        const listed = this.#create(aggregator, topic, story.facts, story.language, {
          breaking: story.breaking,
          syndicate: false,
          storyKey: story.storyKey,
          variant: story.variant,
          how: kind,
          copyOf: story,
        });
        listed.link = link;
        listed.title = story.title;
        listed.summary = story.summary;
        listed.category = story.category;
        listed.instruments = [...story.instruments];
      });
    }
  }

  #reword(story: SimStory): string {
    const topic = TOPICS.find((t) => t.key === story.topic);
    const phrases = topic?.headlines[story.language];
    if (!topic || !phrases?.length) return `${story.title} (updated)`;
    // A correction of the figure, the usual reason for an edited headline.
    story.facts = {
      ...story.facts,
      pct: Math.round(story.facts.pct * 10 + 2) / 10,
      n: story.facts.n + 2,
    };
    const title = phrases[story.variant % phrases.length]?.(story.facts) ?? story.title;
    if (title !== story.title) return title;
    story.variant += 1;
    return phrases[story.variant % phrases.length]?.(story.facts) ?? `${story.title} (updated)`;
  }

  #emit(story: SimStory, type: StreamEvent["type"]): void {
    const now = new Date(this.#o.scheduler.now).toISOString();
    const base = {
      seq: ++this.#seq,
      source: story.outlet,
      at: now,
      guid: story.guid,
      link: story.link,
      revision: story.revision,
    };
    const event: StreamEvent =
      type === "retraction"
        ? { ...base, type, retractedAt: new Date(story.retractedAt ?? 0).toISOString() }
        : {
            ...base,
            type,
            title: story.title,
            summary: story.summary,
            category: story.category,
            breaking: story.breaking,
            instruments: [...story.instruments],
            language: story.language,
            publishedAt: new Date(story.publishedAt).toISOString(),
            updatedAt: new Date(story.updatedAt).toISOString(),
          };
    const kept = this.#history.get(story.outlet);
    if (kept) {
      kept.push(event);
      if (kept.length > HISTORY_LIMIT) {
        const gone = kept.splice(0, kept.length - HISTORY_LIMIT);
        this.#dropped.set(story.outlet, gone[gone.length - 1] as StreamEvent);
      }
    }
    for (const listener of this.#listeners) listener(event);
  }

  #scheduleArrival(): void {
    const generation = ++this.#arrivalGeneration;
    if (this.#rate <= 0) return;
    const { random, scheduler } = this.#o;
    scheduler.after(random.exponential(60_000 / this.#rate), () => {
      if (generation !== this.#arrivalGeneration) return; // the rate changed meanwhile
      this.#organicStory(random.chance(BREAKING_SHARE));
      this.#scheduleArrival();
    });
  }

  #organicStory(breaking: boolean, outlet?: Outlet): void {
    const { random } = this.#o;
    const from =
      outlet ??
      random.weighted(
        this.#o.outlets.filter((o) => !o.aggregator),
        (o) => o.weight,
      );
    if (this.#o.isQuiet(from.id)) return;
    const language = random.pick(from.languages);
    const topic = random.pick(topicsIn(language));
    this.#create(from, topic, this.#nextFacts(topic), language, { breaking, syndicate: true });
  }

  /**
   * A topic's next story is about the next subject on its beat (a district, a company, a team),
   * not a random one: a real desk does not report the same company's results twice in an hour,
   * and two stories that differ only by a figure would be a dedup test's false alarm.
   */
  #nextFacts(topic: Topic): Facts {
    const facts = randomFacts(this.#o.random);
    const beat = this.#beats.get(topic.key) ?? this.#o.random.int(0, 9_999);
    this.#beats.set(topic.key, beat + 1);
    return { ...facts, who: beat };
  }

  /** Now and then news breaks: a breaking story, widely republished, and a handful of follow-ups. */
  #scheduleBurst(): void {
    if (this.#o.burstEveryMs <= 0) return;
    const { random, scheduler } = this.#o;
    scheduler.after(random.exponential(this.#o.burstEveryMs), () => {
      this.#scheduleBurst();
      if (this.#rate <= 0) return; // rate 0 means silence, bursts included
      this.#organicStory(true, this.#defaultOutlet());
      const followUps = random.int(3, 6);
      for (let i = 0; i < followUps; i++) {
        scheduler.after(random.int(2_000, 60_000), () => this.#organicStory(random.chance(0.5)));
      }
    });
  }
}

/** A request the simulator cannot honour (unknown outlet, bad rate); the control API answers 400. */
export class SimError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = "SimError";
  }
}
