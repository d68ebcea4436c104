import { defineConfig } from "vitest/config";
import { testWorker } from "./test/test-bindings.ts";
import { build } from "esbuild";
import DurationSequencer from "./scripts/lib/vitest-sequencer.ts";

/** The carrier simulator (src/dev/simulator), bundled in memory for an auxiliary Worker of the test pool. */
async function carrierSimulator() {
  const out = await build({
    entryPoints: ["src/dev/simulator/worker.ts"],
    bundle: true,
    format: "esm",
    platform: "neutral",
    external: ["cloudflare:*"],
    write: false,
    logLevel: "warning",
  });
  return {
    name: "carrier-sim",
    modules: [{ type: "ESModule" as const, path: "worker.mjs", contents: out.outputFiles[0].text }],
    compatibilityDate: "2026-10-01",
    // SQLite-backed, as in its wrangler.toml: it keeps its state in storage (src/dev/simulator/store.ts).
    durableObjects: { CARRIER_SIM: { className: "CarrierSim", useSQLite: true } },
  };
}

// `npm run test:slow` (EDGEDIAL_SLOW=1): only the seeded simulations (the engine's, the calling rules'), at full length (10,000+ calls). `npm test`
// runs everything, the simulations at a tenth (engine) and a fiftieth (calling rules) of that length.
const SLOW = process.env.EDGEDIAL_SLOW === "1";
// Files whose many concurrent requests of one new key start in a runtime of their own (isolate on): in the shared
// runtime they sometimes met "Cannot perform I/O on behalf of a different request" (RefcountedFulfiller, or the
// request's own body as a ReadableStreamSource) and a request cancelled as hung, never with a fresh runtime per file
// (docs/testing.md).
const FRESH_RUNTIME = ["test/security/rate-limits.test.ts", "test/telephony/defaults-numbers.test.ts"];
const SIMULATIONS = ["test/campaigns/engine-simulation.test.ts", "test/campaigns/rules-simulation.test.ts"];

export default defineConfig(async () => {
  const simulator = await carrierSimulator();
  // The Worker under test with its bindings, for each Workers project (each needs its own plugin).
  const workersPool = () =>
    testWorker(
      {
        R2_ACCOUNT_ID: "",
        R2_ACCESS_KEY_ID: "",
        R2_SECRET_ACCESS_KEY: "",
        R2_BUCKET_NAME: "",
        // Carrier calls: callbacks name this origin, and every carrier API is the simulator.
        PUBLIC_BASE_URL: "http://edgedial.test",
        CARRIER_BASE_URLS: JSON.stringify(
          Object.fromEntries([
            ...["twilio", "plivo", "vobiz", "telnyx", "vonage", "cloudonix", "exotel"].map((p) => [p, `http://sim.test/${p}`]),
            // The sandbox speaks Twilio's protocol to the simulator's Twilio.
            ["sandbox", "http://sim.test/twilio"],
          ]),
        ),
        // Short enough that the carrier-timeout tests wait seconds, not 10 s; ample for the in-process simulator.
        CARRIER_TIMEOUT_MS: "3000",
        SIMULATION_CALLS: SLOW ? "10000" : "1000",
        // Tests read progress right after moving a campaign's object themselves: answers are not shared between
        // reads here, except in test/read-cache.test.ts, which turns the cache on for its own requests.
        READ_CACHE_MS: "0",
      },
      // All outbound fetches go to the simulator, which passes hosts it does not own through.
      { outboundService: "carrier-sim", workers: [simulator] },
    );
  const globalSetup = [
    // Run in Node: the requests the Plivo and Vonage SDKs send (for the originate comparison), the speech clips and
    // the stand-in services the Worker reaches on loopback.
    "./test/calls/sdk-requests.global.ts",
    "./test/calls/audio-clips.global.ts",
    "./test/calls/speech-standin.global.ts",
    "./test/webhooks/receiver.global.ts",
    "./test/agent/tool-standin.global.ts",
    "./test/dev/local-speech.global.ts",
    "./test/agent-tests/model-standin.global.ts",
  ];
  return {
    test: {
      // Two projects: pure modules' tests (`*.unit.test.ts`) in Node, with no runtime to boot; everything that needs
      // the Worker, its bindings, Durable Objects or the carrier simulator in the Workers pool.
      projects: [
        // One Node worker's modules for all its files (isolate off): the pure modules' files leave no state behind, and
        // a fresh module graph per file was half their CPU (73 files: 28 s alone, 14 s shared).
        ...(SLOW ? [] : [{ extends: true, test: { name: "unit", environment: "node", isolate: false, include: ["test/**/*.unit.test.ts"] } }]),
        {
          extends: true,
          // The Workers pool for this project only: the unit project runs in Node, as its files expect.
          plugins: [await workersPool()],
          test: {
            name: "workers",
            // One runtime per worker for all its files, one file after another (test/setup.ts puts back what a fresh
            // isolate has): a fresh runtime per file cost ~5 s of boot and module loading each, two thirds of the run.
            isolate: false,
            include: SLOW ? SIMULATIONS : ["test/**/*.test.ts"],
            // Both run in Node, by their own configs: npm run test:integration, npm run test:browser.
            exclude: [...["test/integration/**", "test/browser/**", "test/tour/**", "test/demo/demo-data.test.ts", "test/**/*.unit.test.ts"], ...FRESH_RUNTIME],
            setupFiles: ["./test/setup.ts", "./test/unhandled-rejections.ts"],
            globalSetup,
          },
        },
        ...(SLOW
          ? []
          : [
              {
                extends: true,
                plugins: [await workersPool()],
                test: { name: "workers-fresh", include: FRESH_RUNTIME, setupFiles: ["./test/setup.ts", "./test/unhandled-rejections.ts"] },
              },
            ]),
      ],
      // Longest files first (scripts/lib/vitest-sequencer.ts), so the run does not end on one long file alone.
      sequence: { sequencer: DurationSequencer },
      // Many files wait on real-time calls: more files at once than cores. Each runtime costs ~7 s of CPU to start and
      // more files at once cost more CPU in all (2026-11-29, quiet: four 306 s and 444 s of CPU, five 287 s and 481 s,
      // six 292-299 s and 517 s; docs/testing.md).
      maxWorkers: 5,
      // Generous limits: CI machines may be slower and busier than a developer's (no test relies on them).
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
});
