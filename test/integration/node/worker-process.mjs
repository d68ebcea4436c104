// The Worker as its own process for the restart test (worker-restart.test.ts): `wrangler dev` through its API
// (unstable_startWorker), run in a snapshot of the sources with file watching off, so edits elsewhere in the working
// tree neither reload it mid-call nor break its restart; the test kills this process's group as a crash would. Settings come in EDGEDIAL_IT_WORKER (JSON:
// port, persist, bindings); the same persistence directory on every start keeps D1 and Durable Object storage.
import { unstable_startWorker } from "wrangler";

const { port, persist, bindings } = JSON.parse(process.env.EDGEDIAL_IT_WORKER ?? "{}");
const plain = Object.fromEntries(Object.entries(bindings).map(([name, value]) => [name, { type: "plain_text", value }]));

const worker = await unstable_startWorker({
  config: "wrangler.jsonc",
  bindings: plain,
  // remote: false: Workers AI (remote only) is not asked for; the agent runs on its scripted engines.
  dev: { inspector: false, server: { hostname: "127.0.0.1", port }, persist, watch: false, remote: false, logLevel: "log" },
});
await worker.ready;
console.log(`worker-process: ready at ${await worker.url}`);
// Kept alive by the dev server; SIGTERM (afterAll) disposes of it cleanly.
process.on("SIGTERM", () => {
  worker.dispose().finally(() => process.exit(0));
});
