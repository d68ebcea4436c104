// `npm run demo` end to end, its data checked over a whole campaign (`npm run test:demo`; Node, its own servers).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/demo/demo-data.test.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 60_000,
  },
});
