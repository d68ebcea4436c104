// Runs before every test file: brings the D1 schema up to date (idempotent, tracked in d1_migrations).
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// The Durable Object classes load their modules when their first object is made (src/lib/lazy-durable-object.ts);
// loaded here, every object is the real class's instance from the first, so runInDurableObject sees its insides.
const { loadDurableObjects } = await import("../src/index");
await loadDurableObjects();
