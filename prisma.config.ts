import { defineConfig } from "prisma/config";

// The datasource URL is only needed by CLI commands that talk to a database (migrate deploy
// where Prisma's schema engine is available). The app applies migrations itself (lib/migrate.ts).
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/wirewatch" },
});
