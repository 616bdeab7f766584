/** The queue story webhook events are applied from, and each story-api source's catch-up runs on. */
export const STORY_QUEUE = "story";

/** The recurring catch-up job of a story-api source: one per source. */
export const catchUpKey = (sourceId: string) => `catchup:${sourceId}`;
