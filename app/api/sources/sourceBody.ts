import { z } from "zod";

/**
 * The shape of a source in a request body, loosely typed: the rules themselves (id pattern,
 * interval bounds, a story-api's tickers and secrets) are the sources file's (sourceSchema),
 * applied by workers/admin/sources.ts so a refusal names the field the same way the file does.
 */
const settings = {
  name: z.string().max(400).optional(),
  url: z.string().max(4_096),
  backfillUrl: z.string().max(4_096).optional(),
  allowPrivate: z.boolean().optional(),
  pollIntervalSeconds: z.number().int().optional(),
  collectors: z.array(z.string().max(64)).max(16).optional(),
  tickers: z.array(z.string().max(64)).max(1_000).optional(),
  storyMode: z.enum(["snapshot", "fetch"]).optional(),
  webhookSecrets: z.array(z.string().max(512)).max(5).optional(),
  render: z.enum(["http", "browser"]).optional(),
  /** "News/Tech"; in an edit, null or "" files the source at the top again. */
  folder: z.string().max(400).nullable().optional(),
};

export const NewSourceBody = z.strictObject({
  ...settings,
  id: z.string().max(200).optional(),
  kind: z.enum(["feed", "stream", "page", "story-api"]).default("feed"),
});

export const SourceEditBody = z.strictObject({ ...settings, url: settings.url.optional() });

/** A URL to look at before saving, and whether it may reach private addresses. */
export const InspectBody = z.strictObject({
  url: z.string().min(1).max(4_096),
  allowPrivate: z.boolean().default(false),
});
