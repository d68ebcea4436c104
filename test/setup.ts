// Runs before every test file: brings the D1 schema up to date (idempotent, tracked in d1_migrations) and puts back
// what a fresh isolate would have. The Workers project runs its files one after another in a shared runtime per
// worker (vitest.config.ts: isolate off), so a file must not inherit a clock, a call starter or a spy another file
// left behind.
import { abortAllDurableObjects, applyD1Migrations, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { setEnginesLive } from "../src/capacity/admission";
import { capacityStub } from "../src/capacity/engine-capacity-object";
import { setCallStarter } from "../src/campaigns/engine/call-starter";
import { setLeaseClient } from "../src/campaigns/engine/leases";
import { clock } from "../src/lib/clock";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

clock.reset();
setCallStarter(null);
setLeaseClient(null);
setEnginesLive(null);
vi.restoreAllMocks();
vi.unstubAllGlobals();
vi.unstubAllEnvs();
vi.useRealTimers();

// What earlier files left running stops: their campaigns, calls and test runs lose their alarms (a campaign's would
// dial through this file's call starter), then every object is reset, so no timer of theirs fires here. Storage
// stays (ids are never reused, so it cannot be mistaken for this file's); each object is quieted once.
const shared = globalThis as { __quietedObjects?: Set<string> };
shared.__quietedObjects ??= new Set<string>();
const quieted = shared.__quietedObjects;
for (const ns of [env.CAMPAIGN, env.CALL_SESSION, env.AGENT_TEST_RUN, env.ARI_EVENTS] as DurableObjectNamespace[]) {
  for (const id of await listDurableObjectIds(ns)) {
    if (quieted.has(id.toString())) continue;
    quieted.add(id.toString());
    await runInDurableObject(ns.get(id), (_object, state) => state.storage.deleteAlarm());
  }
}
await abortAllDurableObjects();

// The deployment's one engine-capacity object: the operator's default limits, and no lease held by another file's
// calls (a call left open there would hold its engines until its lease ran out).
await runInDurableObject(capacityStub(env), async (capacity, state) => {
  const held = state.storage.sql.exec<{ lease_id: string }>("SELECT lease_id FROM leases").toArray();
  capacity.releaseMany(held.map((l) => l.lease_id));
  capacity.setLimits(null);
});

// The Durable Object classes load their modules when their first object is made (src/lib/lazy-durable-object.ts);
// loaded here, every object is the real class's instance from the first, so runInDurableObject sees its insides.
const { loadDurableObjects } = await import("../src/index");
await loadDurableObjects();

// Every module the Worker imports on demand (the routers, the Durable Objects' and handlers' modules, auth's), loaded
// once per runtime before any test. In this pool a module's first import is a request to vitest's module runner, an
// I/O object of the request that began it: a second request that needs the module meanwhile waits on that import, and
// the runtime refuses it ("Cannot perform I/O on behalf of a different request", RefcountedFulfiller) and then
// cancels it as hung. Concurrent first requests (several tests at once, or many requests of one new key) met it. A
// deployed Worker's modules are in its bundle: no I/O, no such wait.
const runtime = globalThis as { __modulesLoaded?: boolean };
if (!runtime.__modulesLoaded) {
  const { mountAllRouters } = await import("../src/app");
  await mountAllRouters();
  await Promise.all(Object.values(import.meta.glob(["../src/**/*.ts", "!../src/dev/**"])).map((load) => load()));
  runtime.__modulesLoaded = true;
}
