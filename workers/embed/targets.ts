import type { Embedder } from "@/lib/embed/types";
import type { RegisteredModel } from "./models";

/** The embed stage's name: its queue and its line_cursors row. */
export const EMBED_STAGE = "embed";

/**
 * The models the embed stage keeps current: the configured one (which may be backfilling) and,
 * while it is, the model search answers with, so the items that arrive during a backfill are
 * found by meaning too. `refresh` is called by the backfill loop when a model completes.
 */
export interface EmbedTarget {
  model: RegisteredModel;
  embedder: Embedder;
}

export class EmbedTargets {
  private list: EmbedTarget[];

  constructor(readonly primary: EmbedTarget) {
    this.list = [primary];
  }

  current(): readonly EmbedTarget[] {
    return this.list;
  }

  /** The configured model, and the search model when it is another one. */
  set(searchModel: EmbedTarget | null): void {
    this.list =
      searchModel && searchModel.model.id !== this.primary.model.id
        ? [this.primary, searchModel]
        : [this.primary];
  }

  ids(): number[] {
    return this.list.map((t) => t.model.id);
  }
}

/** What is embedded of an item: its title and the start of its summary. */
export function passageText(title: string | null, summary: string | null): string {
  const t = (title ?? "").trim();
  // The head of a long summary says what the story is about; past ~2,000 characters the cost
  // grows and the vector does not get better (USE-lite averages its words).
  const s = (summary ?? "").trim().slice(0, 2_000);
  if (t && s) return /[.!?।]$/.test(t) ? `${t} ${s}` : `${t}. ${s}`;
  return t || s;
}
