import { accessSync, constants } from "node:fs";
import path from "node:path";

type Env = Record<string, string | undefined>;

export interface RequiredTool {
  /** Where the tool is, or null when it is not on the PATH. */
  path: string | null;
  /** Missing outside CI: skip, with `note` in the test's name. In CI a missing tool never skips. */
  skip: boolean;
  /** " (SKIPPED: … is not installed)" when skipped, else "": appended to the test's name. */
  note: string;
  /** The tool's path; throws when it is missing (only reached in CI, where that is a failure). */
  need(): string;
}

/** CI=true (as .ci/run sets it), or 1: the machine that installs every tool the tests run. */
export function runningInCi(env: Env = process.env): boolean {
  return ["true", "1"].includes((env.CI ?? "").toLowerCase());
}

function onPath(name: string, env: Env): string | null {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; the next directory
    }
  }
  return null;
}

/**
 * A system tool a test runs (openssl, promtool), found on the PATH. Missing on a developer's
 * machine: the test is skipped, loudly (a warning with the reason, and the reason in the skipped
 * test's name). Missing in CI, which installs it (.ci/run): the test runs and fails at need(),
 * since a check that silently stopped running is worse than one that fails.
 * Use as `const t = requireTool(…); it.skipIf(t.skip)(`…${t.note}`, () => { t.need(); … })`.
 */
export function requireTool(
  name: string,
  what: string,
  install: string,
  env: Env = process.env,
): RequiredTool {
  const found = onPath(name, env);
  const skip = found === null && !runningInCi(env);
  if (skip) {
    console.warn(
      `\n⚠ SKIPPED: ${what}, because ${name} is not on the PATH (${install}). ` +
        "In CI (CI=true) a missing tool fails the test instead.\n",
    );
  }
  return {
    path: found,
    skip,
    note: skip ? ` (SKIPPED: ${name} is not installed)` : "",
    need: () => {
      if (found === null) {
        throw new Error(`${what} needs ${name}, which is not on the PATH: ${install}`);
      }
      return found;
    },
  };
}
