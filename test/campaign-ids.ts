// Campaign object ids for tests that make campaign objects without D1 choosing the id: one allocator for every file.
// Files share a runtime (vitest.config.ts, isolate: false), so their ids must never meet: beside a CPU hog,
// engine-lifecycle's counter (900,001 upward) reached an object another file had already imported (a 409). Random
// over two billion, never one issued before in this runtime: not a counter, since a test that inserts a D1 row with
// such an id moves D1's own AUTOINCREMENT to just past it, where a counter would go next. Below 2^31.
const issued = new Set<number>();

export function testCampaignId(): number {
  for (;;) {
    const id = 2_000_000 + Math.floor(Math.random() * 2_100_000_000);
    if (!issued.has(id)) {
      issued.add(id);
      return id;
    }
  }
}
