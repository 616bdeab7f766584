// Runs `prisma generate` after install. The Prisma CLI looks for its native schema engine, which
// cannot be downloaded on offline machines; generate does not need it, so point the CLI at any
// existing file to stop the lookup (see docs/decisions/001-migrations-without-schema-engine.md).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: "1", CHECKPOINT_DISABLE: "1" };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY || !existsSync(env.PRISMA_SCHEMA_ENGINE_BINARY)) {
  env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
}
execFileSync(process.execPath, ["node_modules/prisma/build/index.js", "generate"], {
  env,
  stdio: "inherit",
});
