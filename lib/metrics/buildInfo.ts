import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { config } from "@/lib/config";
import packageJson from "@/package.json";

/** What wirewatch_build_info says about the running build: one series per process, value 1. */
export interface BuildInfo {
  /** package.json's version, bundled at build time (no file read at run time). */
  version: string;
  /** The commit: WIREWATCH_COMMIT, else the checkout's .git HEAD, else "unknown". */
  commit: string;
  /** The Node running the process (process.version, e.g. v20.19.0). */
  node: string;
}

const COMMIT = /^[0-9a-f]{7,40}$/;

/**
 * Read once, when the process registers its metrics (lib/metrics/registry.ts), never per scrape
 * and never by running git: an image built without .git sets WIREWATCH_COMMIT (a build step can
 * pass `git rev-parse HEAD`); a checkout (`npm start` where it was cloned) has its .git read as
 * files, a few hundred bytes. Anything that does not look like a commit is "unknown", so the label
 * stays one short, bounded value.
 */
export function readBuildInfo(
  options: { commit?: string; root?: string; node?: string; version?: string } = {},
): BuildInfo {
  const given = options.commit ?? config().WIREWATCH_COMMIT;
  const commit = given?.toLowerCase() ?? gitHead(options.root ?? rootDir()) ?? "unknown";
  return {
    version: options.version ?? packageJson.version ?? "unknown",
    commit: COMMIT.test(commit) ? commit : "unknown",
    node: options.node ?? process.version,
  };
}

// The project root, where npm start runs (as lib/migrate.ts reads prisma/); not part of a bundle.
function rootDir(): string {
  return /*turbopackIgnore: true*/ process.cwd();
}

/**
 * The commit HEAD names, from .git's files: HEAD itself (detached), the loose ref it points to,
 * or that ref's line in packed-refs. A worktree's .git is a file pointing at its git dir, whose
 * refs live in the common dir. null when any of it is missing or unreadable.
 */
export function gitHead(root: string): string | null {
  try {
    let gitDir = path.join(root, ".git");
    if (statSync(gitDir).isFile()) {
      const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(gitDir, "utf8"))?.[1]?.trim();
      if (!pointer) return null;
      gitDir = path.resolve(root, pointer);
    }
    const head = readFileSync(path.join(gitDir, "HEAD"), "utf8").trim();
    const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
    if (!ref) return COMMIT.test(head) ? head : null;
    const common = readOptional(path.join(gitDir, "commondir"));
    const refsDir = common ? path.resolve(gitDir, common.trim()) : gitDir;
    for (const dir of new Set([gitDir, refsDir])) {
      const loose = readOptional(path.join(dir, ref))?.trim();
      if (loose && COMMIT.test(loose)) return loose;
      const packed = readOptional(path.join(dir, "packed-refs"));
      const line = packed?.split("\n").find((l) => l.endsWith(` ${ref}`));
      const hash = line?.split(" ")[0];
      if (hash && COMMIT.test(hash)) return hash;
    }
    return null;
  } catch {
    return null;
  }
}

function readOptional(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}
