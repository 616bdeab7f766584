import { DEFAULT_PAGE_LIMIT, listId, PREBUILT_PAGES } from "../readmodel/keys";
import { orderPayload, pagePayload, storyPayload } from "../readmodel/payload";
import type { ListFilter, Payload, PublicStory, ReadModelStore } from "../readmodel/types";

/**
 * A read model as the builder writes it (its payload functions, lib/readmodel/payload.ts), for
 * the request side's tests: `count` stories alternating politics / sports and bn / en, ranked
 * by index; per list its frozen order and the first PREBUILT_PAGES pages at the default limit;
 * every story's payload; then the head.
 */
export function seedStories(count: number, version = 1): PublicStory[] {
  return Array.from({ length: count }, (_, i) => {
    const bn = i % 2 === 1;
    const t = new Date(Date.UTC(2026, 11, 1, 12, 0, 0) - i * 60_000).toISOString();
    return {
      id: (i + 1).toString(16).padStart(64, "0"),
      title: bn
        ? `খবর ${i + 1}: বাজেট ঘোষণা (v${version})`
        : `Story ${i + 1}: budget vote (v${version})`,
      link: `https://example.org/news/${i + 1}`,
      summary: bn ? "সংক্ষিপ্ত বিবরণ" : "A short summary.",
      source: { id: `src-${i % 3}`, name: `Outlet ${i % 3}` },
      outlets: [{ source: { id: `src-${i % 3}`, name: `Outlet ${i % 3}` }, link: null }],
      category: i % 4 < 2 ? "politics" : "sports",
      language: bn ? "bn" : "en",
      breaking: i === 0,
      publishedAt: t,
      firstSeenAt: t,
      updatedAt: t,
    };
  });
}

export const SEED_FILTERS: ListFilter[] = [
  {},
  { category: "politics" },
  { category: "sports" },
  { lang: "bn" },
  { lang: "en" },
  { category: "politics", lang: "bn" },
  { category: "politics", lang: "en" },
  { category: "sports", lang: "bn" },
  { category: "sports", lang: "en" },
];

/** The payloads of one model version over `stories`, as the builder would put them. */
export function modelPayloads(stories: PublicStory[], version: number, builtAt: Date): Payload[] {
  const out: Payload[] = stories.map((s) => storyPayload(s, version, builtAt));
  for (const filter of SEED_FILTERS) {
    const list = listId(filter);
    const members = stories.filter(
      (s) =>
        (!filter.category || s.category === filter.category) &&
        (!filter.lang || s.language === filter.lang),
    );
    out.push(
      orderPayload(
        list,
        members.map((s) => s.id),
        version,
        builtAt,
      ),
    );
    for (let page = 0; page < PREBUILT_PAGES; page++) {
      const offset = page * DEFAULT_PAGE_LIMIT;
      if (offset >= members.length && page > 0) break;
      out.push(
        pagePayload(
          list,
          DEFAULT_PAGE_LIMIT,
          offset,
          members.slice(offset, offset + DEFAULT_PAGE_LIMIT),
          members.length,
          version,
          builtAt,
        ),
      );
    }
  }
  return out;
}

/** Puts a model version into a store and moves its head there. */
export async function seedReadModel(
  store: ReadModelStore,
  { count = 60, version = 1, builtAt = new Date() } = {},
): Promise<PublicStory[]> {
  const stories = seedStories(count, version);
  await store.put(modelPayloads(stories, version, builtAt));
  await store.setHead({ modelVersion: version, builtAt });
  return stories;
}
