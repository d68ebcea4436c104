// Campaign object ids for tests that make campaign objects without a D1 row: one allocator for every file. Files share
// a runtime (vitest.config.ts, isolate: false), so files with their own counters or random ranges met on one object
// (beside a CPU hog, engine-lifecycle's 900,002 was a campaign another file had already imported: a 409). Far above
// any D1 id, below 2^31; a block per evaluation of this module, then a counter.
let n = 0;
const base = 2_000_000 + Math.floor(Math.random() * 100_000) * 10_000;

export const testCampaignId = (): number => base + ++n;
