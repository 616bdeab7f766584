import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", ".next/**", "e2e/**", "tmp/**"],
    // Database tests each get their own database, so files run in parallel; PGlite start-up and
    // property runs on a 2-core machine need more than the default 5 s.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Workers log every start and stop at info; in tests only warnings and errors are worth the
    // screen (LOG_LEVEL=info npm test shows everything).
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" },
    // In CI a JSON report feeds the one-line summary scripts/test-summary.mjs prints.
    reporters: process.env.CI
      ? ["default", ["json", { outputFile: ".reports/vitest.json" }]]
      : ["default"],
  },
});
