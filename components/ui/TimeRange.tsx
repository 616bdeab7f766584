"use client";

import { useSearchParams } from "next/navigation";
import type { ReactNode } from "react";
import styles from "./TimeRange.module.css";
import {
  parseTimeRange,
  RANGE_LABELS,
  RANGE_PARAM,
  TIME_RANGES,
  type TimeRange,
  withTimeRange,
} from "./timeRanges";

export type { TimeRange } from "./timeRanges";
export { RANGE_HOURS, TIME_RANGES } from "./timeRanges";

/**
 * The time range the dashboard's charts show, one choice for every page that draws time. It
 * lives in the URL (`?range=6h`): a reload keeps it, a copied link shows the same, and the
 * navigation's links carry it to the next page (useRangeHref). A page without one in its URL
 * shows its own default until a range is picked.
 */

/** The range in the URL, or null when none was picked (or it is not one of the four). */
export function useChosenTimeRange(): TimeRange | null {
  return parseTimeRange(useSearchParams().get(RANGE_PARAM));
}

/** The range a page shows: the URL's, else the page's default. */
export function useTimeRange(fallback: TimeRange = "1h"): TimeRange {
  return useChosenTimeRange() ?? fallback;
}

/**
 * Puts `range` in the URL in place: Next.js' router follows the history API, so the pages'
 * queries (keyed by range) refetch without a server round trip, and no entry is added to the
 * history: Back leaves the page rather than stepping through the ranges tried.
 */
export function setTimeRange(range: TimeRange): void {
  window.history.replaceState(null, "", withTimeRange(currentHref(), range));
}

const currentHref = () =>
  `${window.location.pathname}${window.location.search}${window.location.hash}`;

/** A function that adds the chosen range (if any) to a dashboard link. */
export function useRangeHref(): (href: string) => string {
  const range = useChosenTimeRange();
  return (href) => withTimeRange(href, range);
}

/**
 * The picker: one button per range, the shown one pressed. `fallback`: what the page shows when
 * the URL has no range. `note`: what the page does with a range it cannot show as asked (data
 * kept in fixed windows), said next to the buttons.
 */
export function TimeRangePicker({
  fallback = "1h",
  note,
}: {
  fallback?: TimeRange;
  note?: ReactNode;
}) {
  const range = useTimeRange(fallback);
  return (
    <div className={styles.bar}>
      <fieldset className={styles.ranges} aria-label="Time window">
        {TIME_RANGES.map((r) => (
          <button
            key={r}
            type="button"
            className={styles.range}
            aria-pressed={range === r}
            onClick={() => setTimeRange(r)}
          >
            {RANGE_LABELS[r]}
          </button>
        ))}
      </fieldset>
      {note ? (
        <p className={styles.note} data-testid="range-note">
          {note}
        </p>
      ) : null}
    </div>
  );
}
