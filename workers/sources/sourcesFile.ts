import { access, readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { folderProblem } from "./opml/folder";

/**
 * wirewatch.config.json: the sources an operator configures in a file (the dashboard can add
 * more). Validated with zod; a bad file stops start-up with the path of the bad field.
 *
 *   { "sources": [ { "id": "reuters-world", "name": "Reuters World", "kind": "feed",
 *                    "url": "https://…/rss", "pollIntervalSeconds": 120, "collectors": ["A"],
 *                    "folder": "News/World" } ] }
 */

const sourceId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, "must be letters, digits and . _ : -");

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:$/.test(new URL(u).protocol), "must be an http or https URL");

export const sourceSchema = z
  .object({
    id: sourceId,
    name: z.string().min(1).max(200),
    kind: z.enum(["feed", "stream", "page", "story-api"]),
    url: httpUrl,
    backfillUrl: httpUrl.optional(),
    /** For a page: the source whose items it shows (its observations are written under it). */
    observes: sourceId.optional(),
    /**
     * A page: "http" reads its HTML as served; "browser" renders it in headless Chromium first,
     * for sites whose headlines appear only after their scripts run.
     */
    render: z.enum(["http", "browser"]).optional(),
    /** Lets this source reach loopback/private addresses (a local simulator, an intranet feed). */
    allowPrivate: z.boolean().default(false),
    enabled: z.boolean().default(true),
    /** The folder it is filed in, "/" between nested names ("News/Tech"); absent: at the top. */
    folder: z
      .string()
      .superRefine((path, ctx) => {
        const problem = folderProblem(path);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
    pollIntervalSeconds: z.number().int().min(5).max(86_400).default(300),
    collectors: z
      .array(z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, "must be a short name like A or B"))
      .min(1)
      .max(8)
      .default(["A"]),
    /** story-api: the tickers whose stories are kept (seed 001). */
    tickers: z
      .array(z.string().regex(/^[A-Z0-9][A-Z0-9.:-]{0,31}$/, "must be an upper-case ticker"))
      .max(1_000)
      .optional(),
    /** story-api: apply the snapshot in each event, or fetch the story when notified. */
    storyMode: z.enum(["snapshot", "fetch"]).optional(),
    /** story-api: Standard Webhooks secrets (whsec_ + base64); two while rotating. */
    webhookSecrets: z
      .array(
        z
          .string()
          .regex(/^whsec_[A-Za-z0-9+/]{16,}={0,2}$/, "must be a whsec_ secret (base64, 12+ bytes)"),
      )
      .max(5)
      .optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.render === "browser" && s.kind !== "page") {
      ctx.addIssue({ code: "custom", path: ["render"], message: "only a page is rendered" });
    }
    const storyOnly = ["tickers", "storyMode", "webhookSecrets"] as const;
    if (s.kind !== "story-api") {
      for (const key of storyOnly) {
        if (s[key] !== undefined) {
          ctx.addIssue({ code: "custom", path: [key], message: "only a story-api source has it" });
        }
      }
      return;
    }
    if (!s.tickers?.length) {
      ctx.addIssue({
        code: "custom",
        path: ["tickers"],
        message: "a story-api source follows at least one ticker",
      });
    }
    if (!s.webhookSecrets?.length) {
      ctx.addIssue({
        code: "custom",
        path: ["webhookSecrets"],
        message: "a story-api source needs its webhook secret to verify deliveries",
      });
    }
  });

export type SourceConfig = z.infer<typeof sourceSchema>;

export const sourcesFileSchema = z
  .object({
    sources: z.array(sourceSchema).max(10_000),
  })
  .strict()
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    for (const [i, s] of file.sources.entries()) {
      if (seen.has(s.id)) {
        ctx.addIssue({
          code: "custom",
          path: ["sources", i, "id"],
          message: `duplicate id "${s.id}"`,
        });
      }
      seen.add(s.id);
    }
    const ids = new Set(file.sources.map((s) => s.id));
    for (const [i, s] of file.sources.entries()) {
      if (s.observes === undefined) continue;
      if (s.kind !== "page") {
        ctx.addIssue({
          code: "custom",
          path: ["sources", i, "observes"],
          message: "only a page observes another source",
        });
      } else if (!ids.has(s.observes) || s.observes === s.id) {
        ctx.addIssue({
          code: "custom",
          path: ["sources", i, "observes"],
          message: `names no other source in this file ("${s.observes}")`,
        });
      }
    }
  });

export class SourcesFileError extends Error {
  constructor(file: string, problems: string[]) {
    super(`${file} is not valid:\n  ${problems.join("\n  ")}`);
    this.name = "SourcesFileError";
  }
}

/** Parses the text of a sources file; errors name the field (e.g. sources[2].url). */
export function parseSourcesFile(text: string, file = "wirewatch.config.json"): SourceConfig[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SourcesFileError(file, [`not JSON: ${(err as Error).message}`]);
  }
  const parsed = sourcesFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new SourcesFileError(
      file,
      parsed.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`),
    );
  }
  return parsed.data.sources;
}

/** The default sources file: optional, so a checkout without one runs with none configured. */
export const DEFAULT_SOURCES_FILE = "./wirewatch.config.json";

export interface SourcesFileSetting {
  file: string;
  /** Named in WIREWATCH_CONFIG: a missing file is a mistake (a typo), not "no sources". */
  required: boolean;
}

/**
 * WIREWATCH_CONFIG read as a sources file: unset → the default file, which may be missing;
 * "none" → no sources file at all; anything else → that file, which must exist (a mistyped
 * path used to read as "no sources" and silently switched every file source off).
 */
export function sourcesFileSetting(value: string | undefined): SourcesFileSetting | null {
  if (value === undefined) return { file: DEFAULT_SOURCES_FILE, required: false };
  if (value === "none") return null;
  return { file: value, required: true };
}

export class SourcesFileMissingError extends Error {
  constructor(file: string) {
    super(
      `WIREWATCH_CONFIG names ${path.resolve(file)}, which does not exist ` +
        '(unset it to use ./wirewatch.config.json when present, or set it to "none" for no sources file)',
    );
    this.name = "SourcesFileMissingError";
  }
}

/** Reads the sources file; a missing default file means no configured sources. */
export async function readSourcesFile(
  file: string,
  { required = false }: { required?: boolean } = {},
): Promise<SourceConfig[] | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    if (required) throw new SourcesFileMissingError(file);
    return null;
  }
  return parseSourcesFile(text, file);
}

/** The sources WIREWATCH_CONFIG configures: [] for none; throws for a missing named or bad file. */
export async function loadSourcesFile(value: string | undefined): Promise<SourceConfig[]> {
  const setting = sourcesFileSetting(value);
  if (!setting) return [];
  return (await readSourcesFile(setting.file, { required: setting.required })) ?? [];
}

/** At start-up, before anything else: a named sources file that is not there stops the process. */
export async function assertNamedSourcesFileExists(value: string | undefined): Promise<void> {
  const setting = sourcesFileSetting(value);
  if (!setting?.required) return;
  try {
    await access(setting.file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new SourcesFileMissingError(setting.file);
    }
    throw err;
  }
}

function formatPath(path: PropertyKey[]): string {
  return path.reduce<string>(
    (out, key) =>
      typeof key === "number" ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key),
    "",
  );
}
