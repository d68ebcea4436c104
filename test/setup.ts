// Runs before every test file: brings the D1 schema up to date (idempotent, tracked in d1_migrations).
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
