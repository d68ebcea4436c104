// bench/dispatch's carrier: an HTTP service in the runner's process, outside workerd as a real carrier is. The
// engine's call starter sends it one request per call (a carrier's originate request); it accepts every call and
// sends the final statuses back to the Worker as a callback request, at once or, in burst mode, 100 calls ending
// together. Its own work (receiving, holding, calling back) is off the runtime's thread, as a real carrier's is.
import { createServer } from "node:http";

/** How long a burst's calls last after the last of them was dialed. */
const BURST_HOLD_MS = 200;

/** Starts the carrier on a free loopback port; `worker(url)` tells it where callbacks go. */
export async function startCarrier() {
  let workerUrl = null;
  /** Per campaign: burst mode's held calls, and how many contacts are left to dial. */
  const campaigns = new Map();
  /** When each call's request reached the carrier, by run id (the bench's own ids, unique within the process). */
  const received = new Map();
  const failures = [];
  /** Callbacks that failed in a row (a success resets it): the runner stops on these rather than wait. */
  const callbacks = { inRow: 0 };
  const failed = (why) => {
    failures.push(why);
    callbacks.inRow++;
  };

  const callback = (campaignId, statuses) =>
    fetch(`${workerUrl}/bench/finals`, { method: "POST", body: JSON.stringify({ campaignId, statuses }), signal: AbortSignal.timeout(30_000) })
      .then(async (r) => {
        if (!r.ok) return failed(`${r.status} ${await r.text()}`);
        callbacks.inRow = 0;
      })
      .catch((err) => failed(String(err)));

  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      const { campaignId, status } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      received.set(status.runId, at);
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      const c = campaigns.get(campaignId);
      if (!c?.burst) return void callback(campaignId, [status]);
      c.held.push(status);
      c.left--;
      if (c.held.length < c.size && c.left > 0) return;
      // The calls last a moment (the campaign's writes for them are long stored), then all end together.
      const all = c.held.splice(0);
      setTimeout(() => callback(campaignId, all), BURST_HOLD_MS);
    });
  });
  // Idle connections kept longer than the runtime keeps them: Node's 5 s default closed a pooled connection just as
  // workerd sent the next call on it ("Network connection lost": a call that never ends), seen under load.
  server.keepAliveTimeout = 10 * 60_000;
  server.headersTimeout = 10 * 60_000 + 5_000;
  // Many connections at once (a burst's 100 starts): no queueing in the listen backlog.
  server.listen({ host: "127.0.0.1", port: 0, backlog: 1024 });
  await new Promise((r) => server.once("listening", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    worker: (url) => {
      workerUrl = String(url).replace(/\/$/, "");
    },
    /** Burst mode for a campaign: hold every call until `size` are up (or none is left), then end them together. */
    campaign: (campaignId, o) => campaigns.set(campaignId, { burst: Boolean(o.burst), size: o.maxConcurrency, left: o.contacts, held: [] }),
    received,
    failures,
    callbacks,
    close: () => new Promise((r) => server.close(r)),
  };
}
