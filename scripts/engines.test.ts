import { readFileSync } from "node:fs";
import path from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

// `npm ci` warns EBADENGINE for every installed package whose `engines.node` leaves out the
// running Node, and every machine that runs wirewatch (CI included) has Node 20. This reads the
// lock file as npm does, so a dependency bumped to a release that wants Node 22 fails here, by
// name, before anyone's install starts warning (decision 032).
const root = path.resolve(import.meta.dirname, "..");
const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8"));

interface LockEntry {
  version?: string;
  engines?: Record<string, unknown> | unknown[];
}

/** The oldest Node that package.json promises to run on (">=20.19" gives 20.19.0). */
function nodeFloor(): string {
  const range: unknown = manifest.engines?.node;
  if (typeof range !== "string") throw new Error("package.json has no engines.node");
  const floor = semver.minVersion(range);
  if (!floor) throw new Error(`package.json engines.node "${range}" admits no version`);
  return floor.version;
}

/** Lock entries whose declared engines.node leaves out `node`, as "path@version wants range". */
function packagesRefusing(node: string): string[] {
  const refusing: string[] = [];
  for (const [where, entry] of Object.entries(lock.packages as Record<string, LockEntry>)) {
    if (where === "") continue;
    // npm checks only a string range; the old array form of engines is advisory and ignored.
    const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (typeof wanted !== "string") continue;
    if (!semver.satisfies(node, wanted, { includePrerelease: true })) {
      refusing.push(`${where}@${entry.version} wants node ${wanted}`);
    }
  }
  return refusing;
}

describe("package-lock.json engines", () => {
  it("is the lock of this package.json (npm copies engines.node into it)", () => {
    expect(lock.packages[""].engines?.node).toBe(manifest.engines.node);
  });

  it("admits the oldest Node that package.json names, so npm ci prints no EBADENGINE", () => {
    expect(packagesRefusing(nodeFloor())).toEqual([]);
  });

  it("admits the Node running these tests, which is what npm ci checks on this machine", () => {
    expect(packagesRefusing(process.versions.node)).toEqual([]);
  });

  it("names the packages that refuse an older Node (the check is not vacuous)", () => {
    // Prisma 7 and entities 9 want 20.19: on 20.9, the floor the README named before, they refuse.
    expect(packagesRefusing("20.9.0")).toEqual(
      expect.arrayContaining([expect.stringMatching(/^node_modules\/prisma@7\..* wants node /)]),
    );
  });
});
