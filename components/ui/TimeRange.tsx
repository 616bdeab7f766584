"use client";

import { useSyncExternalStore } from "react";
import styles from "./TimeRange.module.css";

/**
 * The time range the dashboard's charts show, one choice for every page that draws time: picked on
 * one page, the next page opens on it. Kept in sessionStorage (per tab, gone with it), so two tabs
 * can look at different ranges; the server renders the default and the browser its choice.
 */
export const TIME_RANGES = [1, 6, 24] as const;
export type TimeRangeHours = (typeof TIME_RANGES)[number];

const KEY = "wirewatch.timeRangeHours";
const DEFAULT: TimeRangeHours = 1;
const listeners = new Set<() => void>();

function read(): TimeRangeHours {
  try {
    const stored = Number(window.sessionStorage.getItem(KEY));
    return (TIME_RANGES as readonly number[]).includes(stored)
      ? (stored as TimeRangeHours)
      : DEFAULT;
  } catch {
    return DEFAULT;
  }
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function setTimeRange(hours: TimeRangeHours): void {
  try {
    window.sessionStorage.setItem(KEY, String(hours));
  } catch {
    // Storage refused (private mode): the choice lasts until the page reloads.
  }
  for (const l of listeners) l();
}

/** The chosen range in hours (1, 6 or 24). */
export function useTimeRange(): TimeRangeHours {
  return useSyncExternalStore(subscribe, read, () => DEFAULT);
}

/** The picker: one button per range, the chosen one pressed. */
export function TimeRangePicker() {
  const hours = useTimeRange();
  return (
    <fieldset className={styles.ranges} aria-label="Time window">
      {TIME_RANGES.map((h) => (
        <button
          key={h}
          type="button"
          className={styles.range}
          aria-pressed={hours === h}
          onClick={() => setTimeRange(h)}
        >
          last {h} h
        </button>
      ))}
    </fieldset>
  );
}
