// The Worker: the HTTP app, the queue's and the cron's work, plus the Durable Object classes wrangler binds.
//
// Only the HTTP app is imported statically: every new isolate runs the global scope of what is imported here before
// it answers anything (bench/startup/README.md). The Durable Object classes load their modules when their first
// object is made (lib/lazy-durable-object.ts), the queue's and the cron's handlers theirs when they first run.
import { app } from "./app";
import { lazyDurableObject } from "./lib/lazy-durable-object";

export type CampaignObject = import("./campaigns/campaign-object").CampaignObject;
export type OrganizationObject = import("./organizations/organization-object").OrganizationObject;
export type AriEventsObject = import("./calls/ari/ari-events").AriEventsObject;
export type CallSession = import("./calls/call-session").CallSession;
export type EngineCapacityObject = import("./capacity/engine-capacity-object").EngineCapacityObject;
// Each class's methods, forwarded by its first object from the start (lib/lazy-durable-object.ts; the runtime's own
// handlers are always): test/lib/lazy-durable-object.test.ts fails when a class has a method this list lacks.
export const DURABLE_OBJECT_METHODS = {
  CampaignObject: [
    "initialize",
    "beginImport",
    "importContacts",
    "importPacked",
    "finishImport",
    "failSource",
    "discard",
    "beginAppend",
    "stageAppend",
    "commitAppend",
    "discardAppend",
    "snapshot",
    "progress",
    "refusedRows",
    "progressFor",
    "contacts",
    "logs",
    "counts",
    "start",
    "resume",
    "pause",
    "cancel",
    "updateSettings",
    "wake",
    "onCallStatus",
    "onCallStatuses",
    "callIdsOf",
    "onRunOutcome",
    "eraseNumber",
    "redialPlan",
    "redialContacts",
    "linkRedial",
  ],
  OrganizationObject: [
    "limits",
    "keep",
    "takeRequest",
    "takeCallStart",
    "setRateLimits",
    "cap",
    "sweep",
    "inUse",
    "acquire",
    "acquireMany",
    "release",
    "releaseMany",
    "usage",
    "setCap",
    "suppress",
    "unsuppress",
    "suppression",
    "suppressions",
    "wakeWaiters",
  ],
  AriEventsObject: [
    "inFlight",
    "idle",
    "runOf",
    "listen",
    "checkListening",
    "track",
    "untrack",
    "noteHangup",
    "status",
    "ensureConnected",
    "openSocket",
    "noteFailure",
    "markInactive",
    "resumeMedia",
    "resumeLost",
    "reconcile",
    "closeSocket",
    "configContext",
    "endAnswered",
    "startLive",
    "bridgeMedia",
    "endLive",
    "onMessage",
    "incoming",
  ],
  CallSession: [
    "transferSettled",
    "prepare",
    "snapshot",
    "mediaState",
    "connectTo",
    "attach",
    "machineDetected",
    "dtmfReceived",
    "learnLine",
    "awaitMedia",
    "carrierEnded",
    "begin",
    "onSocketMessage",
    "onMessage",
    "onSocketClose",
    "noMedia",
    "beat",
    "schedule",
    "silenceMs",
    "maxMs",
    "serially",
    "liveFor",
    "handle",
    "startAgent",
    "limits",
    "pump",
    "controls",
    "finish",
    "end",
  ],
  AgentTestRunObject: ["start"],
  EngineCapacityObject: ["limits", "leases", "acquireMany", "grant", "releaseMany", "takeToken", "usage", "setLimits", "wakeWaiters"],
} as const;
export const CampaignObject = lazyDurableObject(
  () => import("./campaigns/campaign-object").then((m) => m.CampaignObject),
  DURABLE_OBJECT_METHODS.CampaignObject,
);
export const OrganizationObject = lazyDurableObject(
  () => import("./organizations/organization-object").then((m) => m.OrganizationObject),
  DURABLE_OBJECT_METHODS.OrganizationObject,
);
export const AriEventsObject = lazyDurableObject(() => import("./calls/ari/ari-events").then((m) => m.AriEventsObject), DURABLE_OBJECT_METHODS.AriEventsObject);
export const CallSession = lazyDurableObject(() => import("./calls/call-session").then((m) => m.CallSession), DURABLE_OBJECT_METHODS.CallSession);
export const EngineCapacityObject = lazyDurableObject(
  () => import("./capacity/engine-capacity-object").then((m) => m.EngineCapacityObject),
  DURABLE_OBJECT_METHODS.EngineCapacityObject,
);

export const AgentTestRunObject = lazyDurableObject(
  () => import("./agent-tests/run-object").then((m) => m.AgentTestRunObject),
  DURABLE_OBJECT_METHODS.AgentTestRunObject,
);

/** Loads every Durable Object class now (the test setup: objects are then the real classes' instances from the first). */
export async function loadDurableObjects(): Promise<void> {
  await Promise.all([CampaignObject, OrganizationObject, AriEventsObject, CallSession, EngineCapacityObject, AgentTestRunObject].map((c) => c.load()));
}

export default {
  fetch: app.fetch,
  // The WEBHOOKS queue (wrangler.jsonc): signed deliveries to organizations' webhook endpoints.
  // The same queue carries each ended call's after-call work (analysis, the agent's webhook nodes).
  queue: async (batch, env) => {
    const [{ isAfterCall, runAfterCalls }, { deliverWebhooks }] = await Promise.all([import("./calls/after-call/post-call"), import("./webhooks/deliver")]);
    const after = batch.messages.filter((m) => isAfterCall(m.body));
    const deliveries = after.length ? { ...batch, messages: batch.messages.filter((m) => !isAfterCall(m.body)) } : batch;
    await Promise.all([deliverWebhooks(deliveries, env), runAfterCalls(after, env)]);
  },
  // The cron in wrangler.jsonc (triggers): removes campaign imports a dead Worker left half done, and hangs up
  // and ends calls that outlived max_call_seconds (so no run stays open and no lease is held), and purges the data
  // retention expired (privacy/purge.ts, daily per organization, in batches).
  async scheduled(_controller, env, _ctx) {
    const [{ sweepAbandonedImports }, { MAX_CALL_SECONDS, TIMEOUT_GRACE_SECONDS }, { sweepOverdueRuns }, { migrateRunDetails }, { clock }, { purgeExpired }] =
      await Promise.all([
        import("./campaigns/sweep"),
        import("./calls/campaign/call-length"),
        import("./calls/runs/run-sweep"),
        import("./calls/runs/run-details"),
        import("./lib/clock"),
        import("./privacy/purge"),
      ]);
    await sweepAbandonedImports(env, clock.now());
    await sweepOverdueRuns(env, clock.now(), { maxCallSeconds: MAX_CALL_SECONDS, graceSeconds: TIMEOUT_GRACE_SECONDS });
    // Runs from before the details objects: a bounded batch moved to R2 each time.
    await migrateRunDetails(env);
    await purgeExpired(env, clock.now());
  },
} satisfies ExportedHandler<Env>;
