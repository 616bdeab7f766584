import { rm } from "node:fs/promises";
import { e2eDataDir } from "./fixtures/app";

/** Removes the run's data directory, unless E2E_KEEP_DATA=1 asks to keep it for a look. */
export default async function teardown(): Promise<void> {
  const dir = e2eDataDir();
  if (process.env.E2E_KEEP_DATA === "1") {
    console.log(`e2e data kept in ${dir}`);
    return;
  }
  await rm(dir, { recursive: true, force: true });
}
