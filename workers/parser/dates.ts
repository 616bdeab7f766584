// Feed dates as ISO 8601 UTC ("2004-01-01T19:48:21Z"), or undefined when a date cannot be read
// with confidence: a wrong date is worse than none, so there is no fallback to Date.parse, whose
// reading of odd strings depends on the engine and the machine's time zone.

const MONTHS: Record<string, number> = {
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  may: 4,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  oct: 9,
  nov: 10,
  dec: 11,
};

// RFC 822 / 1123 zones plus the abbreviations real feeds use. Ambiguous ones take their most
// common meaning in English-language news feeds (IST = India, BST = British Summer Time).
const ZONES: Record<string, number> = {
  UT: 0,
  UTC: 0,
  GMT: 0,
  Z: 0,
  WET: 0,
  EST: -5,
  EDT: -4,
  CST: -6,
  CDT: -5,
  MST: -7,
  MDT: -6,
  PST: -8,
  PDT: -7,
  AKST: -9,
  AKDT: -8,
  HST: -10,
  AST: -4,
  ADT: -3,
  NST: -3.5,
  NDT: -2.5,
  BST: 1,
  IST: 5.5,
  CET: 1,
  CEST: 2,
  MET: 1,
  MEST: 2,
  WEST: 1,
  EET: 2,
  EEST: 3,
  MSK: 3,
  JST: 9,
  KST: 9,
  HKT: 8,
  SGT: 8,
  AEST: 10,
  AEDT: 11,
  ACST: 9.5,
  ACDT: 10.5,
  AWST: 8,
  NZST: 12,
  NZDT: 13,
};

function offsetMinutes(zone: string | undefined): number | undefined {
  if (!zone) return 0; // no zone: RFC 3339 forbids it, feeds do it; UTC is the usual intent
  const numeric = zone.match(/^([+-])(\d{1,2}):?(\d{2})?$/);
  if (numeric) {
    const minutes = Number(numeric[2]) * 60 + Number(numeric[3] ?? 0);
    return numeric[1] === "-" ? -minutes : minutes;
  }
  const named = ZONES[zone.toUpperCase()];
  if (named !== undefined) return named * 60;
  // RFC 822 military letters are notoriously reversed in practice; treat them as UTC.
  if (/^[A-IK-Za-ik-z]$/.test(zone)) return 0;
  return undefined;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 1 && leap ? 29 : (DAYS[month] as number);
}

function build(
  year: number,
  month: number,
  day: number,
  h: number,
  m: number,
  s: number,
  ms: number,
  zone: string | undefined,
): string | undefined {
  const offset = offsetMinutes(zone);
  if (offset === undefined) return undefined;
  if (month < 0 || month > 11 || day < 1 || day > 31 || h > 24 || m > 59 || s > 60) {
    return undefined;
  }
  if (year < 1970 || year > 2200) return undefined;
  // Reject 31 February and the like instead of letting Date roll over into March.
  if (day > daysIn(year, month)) return undefined;
  const t = Date.UTC(year, month, day, h, m, Math.min(s, 59), ms) - offset * 60_000;
  if (Number.isNaN(t)) return undefined;
  const iso = new Date(t).toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ]+(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?|[A-Za-z]{1,5})?$/;

function fromIso(s: string): string | undefined {
  const m = s.match(ISO);
  if (!m) return undefined;
  const ms = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  return build(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4] ?? 0),
    Number(m[5] ?? 0),
    Number(m[6] ?? 0),
    ms,
    m[8],
  );
}

// "Thu, 01 Jan 2004 19:48:21 GMT" and its sloppy cousins: no day name, no comma, full month
// names, two-digit years, no seconds, "+0000 (UTC)", zone as "UTC+2", dots as separators.
const RFC822 =
  /^(?:[A-Za-z]+\.?,?\s*)?(\d{1,2})[\s-]+([A-Za-z]+)\.?[\s-]+(\d{2,4}),?\s+(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?\s*([A-Za-z]{1,5}|[+-]\d{1,2}:?\d{2})?(?:\s*\(.*\))?$/;
// "Thu Jan 01 2004 19:48:21 GMT" and "January 1, 2004 19:48 +0000" (month first).
const MONTH_FIRST =
  /^(?:[A-Za-z]+,?\s+)?([A-Za-z]+)\.?\s+(\d{1,2}),?\s+(\d{4}),?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([A-Za-z]{1,5}|[+-]\d{1,2}:?\d{2})?$/;

function year(y: string): number {
  const n = Number(y);
  if (y.length === 2) return n < 50 ? 2000 + n : 1900 + n;
  return n;
}

function month(name: string): number | undefined {
  return MONTHS[name.slice(0, 3).toLowerCase()];
}

function splitZone(zone: string | undefined): string | undefined {
  // "UTC+2" / "GMT-0500": the named part is UTC, the rest is the offset.
  const m = zone?.match(/^(?:UTC|GMT)([+-]\d{1,2}(?::?\d{2})?)$/i);
  if (!m?.[1]) return zone;
  return /^[+-]\d{1,2}$/.test(m[1]) ? `${m[1]}:00` : m[1];
}

// The form nearly every RSS feed writes ("Tue, 01 Dec 2026 10:00:00 +0000"), read without the
// normalising passes the sloppy forms need; RFC822 reads it to the same fields.
const RFC822_STRICT =
  /^[A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-]\d{4}|GMT|UTC|UT|Z)$/;

export function toIsoDate(raw: string | undefined): string | undefined {
  const strict = raw === undefined ? null : RFC822_STRICT.exec(raw);
  if (strict) {
    const mon = month(strict[2] as string);
    if (mon === undefined) return undefined;
    const [, day, , y, h, m, sec, zone] = strict.map(String);
    return build(Number(y), mon, Number(day), Number(h), Number(m), Number(sec), 0, zone);
  }
  const s = raw?.trim().replace(/\s+/g, " ");
  if (!s) return undefined;
  const iso = fromIso(s);
  if (iso) return iso;
  const normalised = s.replace(/\b(UTC|GMT)\s*([+-]\d)/i, "$1$2");
  const zoneTail = normalised.match(/\s((?:UTC|GMT)[+-]\d{1,2}(?::?\d{2})?)$/i);
  const text = zoneTail?.[1]
    ? `${normalised.slice(0, -zoneTail[1].length)}${splitZone(zoneTail[1])}`
    : normalised;
  let m = text.match(RFC822);
  if (m) {
    const mon = month(m[2] ?? "");
    if (mon === undefined) return undefined;
    return build(
      year(m[3] ?? ""),
      mon,
      Number(m[1]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6] ?? 0),
      0,
      m[7],
    );
  }
  m = text.match(MONTH_FIRST);
  if (m) {
    const mon = month(m[1] ?? "");
    if (mon === undefined) return undefined;
    return build(
      Number(m[3]),
      mon,
      Number(m[2]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6] ?? 0),
      0,
      m[7],
    );
  }
  return undefined;
}
