// The README's tour against `npm run dev` on a fresh copy of the repository (`npm run test:tour`; CI runs it).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/tour/readme-tour.test.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 400_000,
    hookTimeout: 200_000,
  },
});
