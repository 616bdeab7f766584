import { defineConfig } from "@playwright/test";
import {
  E2E_ADMIN_PASSWORD,
  E2E_BASE_URL,
  E2E_PORT,
  e2eDataDir,
  e2eSimulatorPort,
} from "./e2e/fixtures/app";

const dataDir = e2eDataDir();
const simulatorPort = e2eSimulatorPort();

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  globalTeardown: "./e2e/teardown.ts",
  forbidOnly: !!process.env.CI,
  // In CI, also the JSON report scripts/test-summary.mjs reads for the run's closing line.
  reporter: process.env.CI
    ? [["list"], ["json", { outputFile: ".reports/playwright.json" }]]
    : [["list"]],
  use: {
    baseURL: E2E_BASE_URL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    browserName: "chromium",
    launchOptions: {
      // Debian's Chromium; Playwright's own browser download is not available offline.
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
      ],
    },
  },
  webServer: {
    // Build when the sources changed, write the fixtures through the real writer, then serve.
    command: `node scripts/ensure-build.mjs && npx tsx e2e/prepare.ts && npx next start -p ${E2E_PORT}`,
    url: `${E2E_BASE_URL}/api/health`,
    // A cold `next build` took about a minute on the development machine; PGlite's first
    // start a few seconds more.
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: "pipe",
    env: {
      // The embedded default is what this suite tests, whatever the shell has set
      // (lib/config.ts reads an empty string as unset).
      DATABASE_URL: "",
      WIREWATCH_DATA_DIR: dataDir,
      // No sources file (whatever the working tree has): the sources are the simulator's, which
      // runs inside the server on a port the specs know (e2e/fixtures/simulator.ts drives it).
      WIREWATCH_CONFIG: "none",
      WIREWATCH_SIMULATOR: "on",
      SIMULATOR_PORT: String(simulatorPort),
      // The simulator's story API delivers its signed webhooks back to this server.
      WIREWATCH_URL: E2E_BASE_URL,
      // Stage faults for "make a stage fail" (workers/chaos/chaos.ts, e2e/fixtures/admin.ts).
      WIREWATCH_CHAOS: "on",
      // Admin actions need a login, so the specs go through /login (e2e/fixtures/admin.ts).
      ADMIN_PASSWORD: E2E_ADMIN_PASSWORD,
      NEXT_TELEMETRY_DISABLED: "1",
    },
  },
});
