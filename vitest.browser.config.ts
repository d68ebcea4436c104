// The browser suite (`npm run test:browser`): the Worker under `wrangler dev` (unstable_startWorker) and Debian's
// headless Chromium driven by playwright-core. Runs in Node, outside the workerd pool; screenshots are written to
// test-artifacts/ (git-ignored).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    // One browser and one dev server: no parallel files. Generous limits for busy CI machines.
    fileParallelism: false,
    globalSetup: ["test/browser/global-setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
