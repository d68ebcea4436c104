// The integration tests that run in Node rather than in the Workers pool (`npm run test:integration` runs both):
// here the Worker is a process of its own (`wrangler dev`), which a test can kill and start again.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/integration/node/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test/integration/node/asterisk.global.ts", "./test/integration/sipp.global.ts"],
    // One Worker process and one Asterisk: no parallel files.
    fileParallelism: false,
    testTimeout: 150_000,
    hookTimeout: 180_000,
  },
});
