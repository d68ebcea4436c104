// A setup file of the Workers project: a promise rejection nobody handled, in the test's isolate (where the Worker
// and its Durable Objects run under the pool), fails the test during which it was reported, with its reason; one
// reported after a file's last test fails the run, as Vitest reports it. Vitest alone would only fail the run at
// its end ("Unhandled Errors") and guess the test; it steps aside while another `unhandledRejection` listener is
// registered, as this one is until the file's end. A rejection handled later (`rejectionHandled`) does not count.
// Rejections in other isolates (the carrier simulator, Miniflare's own services) are printed by workerd and cannot
// be seen here: see docs/testing.md.
import process from "node:process";
import { afterAll, afterEach } from "vitest";

const pending = new Map<Promise<unknown>, unknown>();
const rejected = (reason: unknown, promise: Promise<unknown>) => void pending.set(promise, reason);
const handled = (promise: Promise<unknown>) => void pending.delete(promise);
process.on("unhandledRejection", rejected);
process.on("rejectionHandled", handled);

/** The rejections reported and not handled since the last call, forgotten once taken. */
export function takeUnhandled(): unknown[] {
  const reasons = [...pending.values()];
  pending.clear();
  return reasons;
}

async function failOnUnhandled() {
  // A rejection of the test's last turn is reported once its microtasks have run.
  await scheduler.wait(1);
  const reasons = takeUnhandled();
  if (!reasons.length) return;
  const said = reasons.map((r) => (r instanceof Error ? `${r.name}: ${r.message}` : String(r))).join("; ");
  throw new AggregateError(reasons, `${reasons.length} unhandled promise rejection(s) during this test: ${said}`);
}

afterEach(failOnUnhandled);
afterAll(async () => {
  // Past the file's last test, Vitest's own listener reports what still comes (it fails the run).
  process.off("unhandledRejection", rejected);
  process.off("rejectionHandled", handled);
  await failOnUnhandled();
});
