import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import type { StoryApi } from "./api";
import { type StoryEvent, storiesOf } from "./events";
import { notifyOnce, type Sender } from "./notify";
import type { StorySource } from "./source";
import { closeStory, saveStory } from "./writes";

export interface ApplyContext {
  db: Database;
  source: StorySource;
  api: StoryApi;
  /** How a "became strong" notification goes out (default: NOTIFY wirewatch_stories). */
  send?: Sender;
}

export type ApplyResult = "applied" | "ignored";

/**
 * The one handler for an event, whichever way it came (webhook or catch-up): seeing an event
 * twice, late or out of order changes nothing, because every write is one of the two safe
 * writes. Snapshot mode applies the snapshot in the event; fetch mode asks the API for the
 * current state of the stories the event names (a 404 closes). A "became strong" event claims
 * its notification once, unless the event is history (published before its ticker was added).
 */
export async function applyStoryEvent(ctx: ApplyContext, event: StoryEvent): Promise<ApplyResult> {
  const { db, source } = ctx;
  const addedAt = source.tickers.get(event.ticker);
  if (!addedAt) return "ignored";
  if (source.mode === "snapshot") await applySnapshot(db, source.id, event);
  else await fetchOnNotify(ctx, event);

  if (event.type === "story.became_strong") {
    if (Date.parse(event.created_at) < addedAt.getTime()) {
      emit("story:notification", { source: source.id, outcome: "backfill" });
    } else {
      await notifyOnce(db, { sourceId: source.id, story: event.data.story }, ctx.send);
    }
  }
  return "applied";
}

async function applySnapshot(db: Database, sourceId: string, event: StoryEvent): Promise<void> {
  switch (event.type) {
    case "story.created":
    case "story.updated":
    case "story.became_strong":
      await saveStory(db, sourceId, event.data.story);
      return;
    case "story.closed":
      await closeStory(db, sourceId, event.data.story_id, event.data.version, event.ticker);
      if (event.data.merged_into) await saveStory(db, sourceId, event.data.merged_into);
      return;
    case "article.shortlisted":
      // The story's version bump comes as its own story.updated.
      return;
  }
}

async function fetchOnNotify(ctx: ApplyContext, event: StoryEvent): Promise<void> {
  for (const id of storiesOf(event)) {
    const story = await ctx.api.getStory(id);
    if (story) await saveStory(ctx.db, ctx.source.id, story);
    else await closeStory(ctx.db, ctx.source.id, id, 0, event.ticker);
  }
}
