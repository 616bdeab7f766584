// `npm start` runs this first (prestart): build when there is no build or when a source the
// build is made from is newer than it, else do nothing. Prints one line saying which.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BUILD_ID = ".next/BUILD_ID";
const SOURCE_DIRS = ["app", "components", "lib", "workers"];
const SOURCE_FILES = [
  "next.config.ts",
  "package-lock.json",
  "instrumentation.ts",
  "instrumentation-node.ts",
  "proxy.ts",
  "tsconfig.json",
  // The generated client is bundled into the build; the schema is what it is generated from.
  "prisma/schema.prisma",
];
// Rewritten by `prisma generate` on every install, so its times say nothing; see the schema above.
const SKIP = new Set([path.join("lib", "generated")]);

process.chdir(path.join(path.dirname(fileURLToPath(import.meta.url)), ".."));

const built = mtimeOf(BUILD_ID);
const reason = built === undefined ? `no build yet (${BUILD_ID} missing)` : newerThan(built);

if (!reason) {
  console.log(`ensure-build: build is up to date (${BUILD_ID} is newer than every source)`);
  process.exit(0);
}
console.log(`ensure-build: ${reason}, running next build`);
const result = spawnSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], {
  stdio: "inherit",
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
});
process.exit(result.status ?? 1);

/** Why the build is stale (the first newer source found); undefined when it is not. */
function newerThan(buildTime) {
  for (const file of SOURCE_FILES) {
    const t = mtimeOf(file);
    if (t !== undefined && t > buildTime) return `${file} changed since the last build`;
  }
  for (const dir of SOURCE_DIRS) {
    const found = firstNewer(dir, buildTime);
    if (found) return found;
  }
  return undefined;
}

function firstNewer(dir, buildTime) {
  // A directory's own time changes when a file in it is added, renamed or deleted, which no
  // remaining file's time would show (a deleted page would otherwise live on in the build).
  const own = mtimeOf(dir);
  if (own !== undefined && own > buildTime)
    return `${dir}/ gained or lost a file since the last build`;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (SKIP.has(full)) continue;
    if (entry.isDirectory()) {
      const found = firstNewer(full, buildTime);
      if (found) return found;
    } else if (entry.isFile() && statSync(full).mtimeMs > buildTime) {
      return `${full} changed since the last build`;
    }
  }
  return undefined;
}

function mtimeOf(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}
