// Formatting shared by the dashboard's client components: short, for table cells and tiles.

/** 42 s, 3.5 min, 2.1 h, 1.5 d. */
export function duration(seconds: number): string {
  const s = Math.abs(seconds);
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 90 * 60) return `${(s / 60).toFixed(1)} min`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} d`;
}

/** "12 s ago", "in 40 s", or "–" for no time; `now` is the server's time of the answer. */
export function relative(iso: string | null | undefined, now: string | number | Date): string {
  if (!iso) return "–";
  const diff = (new Date(iso).getTime() - new Date(now).getTime()) / 1000;
  if (Math.abs(diff) < 1) return "now";
  return diff < 0 ? `${duration(-diff)} ago` : `in ${duration(diff)}`;
}

/** An instant as UTC, for a title attribute. */
export function utc(iso: string | null | undefined): string | undefined {
  return iso ? `${iso.replace("T", " ").replace(/\.\d+Z$/, "Z")}` : undefined;
}

/** 0.123 → "12%"; null → "–". */
export function percent(share: number | null | undefined): string {
  if (share === null || share === undefined) return "–";
  if (share > 0 && share < 0.01) return "<1%";
  return `${Math.round(share * 100)}%`;
}

/** Milliseconds as a short duration. */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return "–";
  return value < 1000 ? `${Math.round(value)} ms` : duration(value / 1000);
}
