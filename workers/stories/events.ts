import { z } from "zod";

/**
 * The story API's objects as wirewatch reads them (seed 001), validated at the edge: a webhook
 * body or a catch-up page that does not parse is refused with the path of the bad field, never
 * half-applied. Unknown fields are kept (the API may add some); unknown event types parse and are
 * recorded but change nothing.
 */

const id = z.string().min(1).max(200);
const ticker = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[A-Z0-9][A-Z0-9.:-]*$/, "must be an upper-case ticker such as ACME or BRK.B");
const instant = z.iso.datetime({ offset: true });

export const articleSchema = z.looseObject({
  id,
  story_id: id,
  title: z.string().max(2_000),
  url: z.string().max(2_000),
  published_at: instant,
});

export const storySchema = z.looseObject({
  id,
  ticker,
  /** Grows by one with every change the API makes to the story. */
  version: z.number().int().min(1).max(2_147_483_647),
  title: z.string().max(2_000),
  strong: z.boolean(),
  articles: z.array(articleSchema).max(10_000),
  created_at: instant,
  updated_at: instant,
});

const base = { id, created_at: instant, ticker };

export const STORY_EVENT_TYPES = [
  "story.created",
  "story.updated",
  "story.became_strong",
  "story.closed",
  "article.shortlisted",
] as const;

export const storyEventSchema = z.discriminatedUnion("type", [
  z.looseObject({
    ...base,
    type: z.enum(["story.created", "story.updated", "story.became_strong"]),
    data: z.looseObject({ story: storySchema }),
  }),
  z.looseObject({
    ...base,
    type: z.literal("story.closed"),
    data: z.looseObject({
      story_id: id,
      /** The closing version: one more than the story's last open version. */
      version: z.number().int().min(1).max(2_147_483_647),
      /** The surviving story's snapshot when this one merged into another. */
      merged_into: storySchema.nullable(),
    }),
  }),
  z.looseObject({
    ...base,
    type: z.literal("article.shortlisted"),
    data: z.looseObject({ article: articleSchema }),
  }),
]);

export const eventsPageSchema = z.object({
  data: z.array(z.unknown()).max(10_000),
  next_cursor: z.string().min(1).max(2_000),
  has_more: z.boolean(),
});

export const storiesListSchema = z.object({ data: z.array(z.unknown()).max(100_000) });

export type Article = z.infer<typeof articleSchema>;
export type Story = z.infer<typeof storySchema>;
export type StoryEvent = z.infer<typeof storyEventSchema>;

/** What a story or event failed to parse on, as one readable line. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
    .join("; ");
}

/** The stories an event is about (seed 001's storiesOf): whose current state to fetch. */
export function storiesOf(event: StoryEvent): string[] {
  switch (event.type) {
    case "story.closed":
      return event.data.merged_into
        ? [event.data.story_id, event.data.merged_into.id]
        : [event.data.story_id];
    case "article.shortlisted":
      return [event.data.article.story_id];
    default:
      return [event.data.story.id];
  }
}
