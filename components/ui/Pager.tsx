"use client";

import { type ReactNode, useMemo, useState } from "react";
import s from "@/components/dashboard.module.css";

/**
 * The cursors a list's pages were fetched with, the shown page's last: keyset pages cannot be
 * counted back from the end, so going back means remembering the way forward.
 */
export interface Pages {
  /** The cursor of the page shown; null for the first page. */
  cursor: string | null;
  /** How many pages past the first the shown one is. */
  depth: number;
  forward: (cursor: string) => void;
  back: () => void;
  reset: () => void;
}

export function usePages(): Pages {
  const [stack, setStack] = useState<string[]>([]);
  const moves = useMemo(
    () => ({
      forward: (cursor: string) => setStack((s) => [...s, cursor]),
      back: () => setStack((s) => s.slice(0, -1)),
      reset: () => setStack([]),
    }),
    [],
  );
  return { cursor: stack.at(-1) ?? null, depth: stack.length, ...moves };
}

/** Where the back button goes: to the first page (`firstLabel`), or one page back (`backLabel`). */
type Back = { firstLabel: string; backLabel?: never } | { backLabel: string; firstLabel?: never };

type PagerProps = Back & {
  pages: Pages;
  /** The cursor of the page after this one, as the answer gave it; none on the last page. */
  next: string | null | undefined;
  nextLabel: string;
  /** Said beside the buttons (how far a search looked, say). */
  children?: ReactNode;
};

/** The two buttons under a keyset-paged table. */
export function Pager({ pages, next, nextLabel, firstLabel, backLabel, children }: PagerProps) {
  return (
    <div className={s.pager}>
      <button
        type="button"
        className={s.button}
        disabled={pages.depth === 0}
        onClick={firstLabel === undefined ? pages.back : pages.reset}
      >
        {firstLabel ?? backLabel}
      </button>
      <button
        type="button"
        className={s.button}
        disabled={!next}
        onClick={() => next && pages.forward(next)}
      >
        {nextLabel}
      </button>
      {children}
    </div>
  );
}
