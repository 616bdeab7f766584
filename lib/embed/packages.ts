import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * Where an installed package is, found by walking up node_modules directories as Node does,
 * from this module's directory and from the working directory (a server bundle's modules sit
 * under .next/, the project's node_modules above them).
 *
 * Found by hand, not with require.resolve: bundlers rewrite `require.resolve("…")` (also on a
 * createRequire'd function) into a module id of their own, and the models' packages are
 * loaded by a worker thread, outside any bundle. The worker resolves the entry itself, with
 * Node's resolver, from `searchRoots()`.
 */
export function searchRoots(): string[] {
  const roots = [process.cwd()];
  const here = (import.meta as { dirname?: string }).dirname;
  if (typeof here === "string") roots.unshift(here);
  return roots;
}

export function findPackage(name: string): { dir: string; version: string } | undefined {
  for (const start of searchRoots()) {
    for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
      const manifest = path.join(dir, "node_modules", name, "package.json");
      if (existsSync(manifest)) {
        try {
          const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version?: string };
          return { dir: path.dirname(manifest), version: version ?? "unknown" };
        } catch {
          return { dir: path.dirname(manifest), version: "unknown" };
        }
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  return undefined;
}
