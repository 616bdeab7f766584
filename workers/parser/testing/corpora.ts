import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

// Shared by the corpus tests: where the corpora live, and a ledger of where our output and
// another project's expected output disagree. Every disagreement must be listed, with a reason,
// in testdata/corpus-disagreements.json, and every listed one must still happen, so the list
// stays true in both directions.

const REPO_ROOT = path.resolve(import.meta.dirname, "../../..");
export const CORPORA = path.resolve(REPO_ROOT, "../shared/corpora");

/** The corpus folder, or undefined after a loud warning (CI has it; a laptop may not). */
export function corpusDir(name: string): string | undefined {
  const dir = path.join(CORPORA, name);
  if (existsSync(dir)) return dir;
  console.warn(
    `\n!!!!!!!!\n!!! corpus tests SKIPPED: ${dir} is missing (expected beside the repository at ../shared/corpora)\n!!!!!!!!\n`,
  );
  return undefined;
}

export function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) yield* walk(full);
    else yield full;
  }
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

type Known = Record<string, Record<string, string>>;
const KNOWN = readJson<Known>(
  path.join(import.meta.dirname, "../testdata/corpus-disagreements.json"),
);

const normalise = (v: unknown) => (typeof v === "string" ? v.replace(/\s+/g, " ").trim() : v);

/** Same instant, whatever the notation; two missing dates agree. */
export function sameInstant(a: string | undefined | null, b: string | undefined | null): boolean {
  if (!a || !b) return !a && !b;
  return Date.parse(a) === Date.parse(b);
}

/** Same URL after WHATWG serialisation ("http://x" and "http://x/" are one address). */
export function sameUrl(a: string | undefined | null, b: string | undefined | null): boolean {
  if (!a || !b) return !a && !b;
  const href = (u: string) => {
    try {
      return new URL(u.trim()).href;
    } catch {
      return u.trim();
    }
  };
  return href(a) === href(b);
}

export class Ledger {
  private readonly seen = new Map<string, string>();
  private readonly feeds = new Map<string, boolean>();
  readonly checked = new Map<string, number>();
  private checks = 0;
  private checksAgreeing = 0;

  constructor(readonly corpus: string) {}

  /** Records one field comparison; `field` names the kind ("entry.title"), not the index. */
  check(file: string, field: string, ours: unknown, theirs: unknown, same?: boolean): void {
    const agree = same ?? normalise(ours) === normalise(theirs);
    this.checked.set(field, (this.checked.get(field) ?? 0) + 1);
    this.checks++;
    if (!this.feeds.has(file)) this.feeds.set(file, true);
    if (agree) {
      this.checksAgreeing++;
      return;
    }
    this.feeds.set(file, false);
    const key = `${file}#${field}`;
    if (!this.seen.has(key)) {
      this.seen.set(key, `ours ${JSON.stringify(ours)} theirs ${JSON.stringify(theirs)}`);
    }
  }

  /** Disagreements not in the list (with an example), and listed ones that no longer happen. */
  verdict(): { unlisted: string[]; stale: string[] } {
    const known = KNOWN[this.corpus] ?? {};
    const unlisted = [...this.seen].filter(([k]) => !(k in known)).map(([k, v]) => `${k}: ${v}`);
    const stale = Object.keys(known).filter((k) => !this.seen.has(k));
    return { unlisted, stale };
  }

  /**
   * Agreement two ways: feeds that agree on every mapped field (the figure decision 018 and
   * issue 17 quote), and single field comparisons.
   */
  summary(): string {
    const byKind = new Map<string, number>();
    for (const key of this.seen.keys()) {
      const kind = key.slice(key.indexOf("#") + 1);
      byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
    }
    const matched = [...this.feeds.values()].filter(Boolean).length;
    const kinds = [...byKind].map(([k, n]) => `${k} ${n}`).join(", ") || "none";
    const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;
    return (
      `${this.corpus}: ${this.feeds.size} feeds compared, ${matched} agree on every mapped field (${pct(matched, this.feeds.size)}); ` +
      `${this.checks} field checks, ${this.checksAgreeing} agree (${pct(this.checksAgreeing, this.checks)}); disagreements by kind: ${kinds}`
    );
  }
}
