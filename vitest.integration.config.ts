// The integration suite (`npm run test:integration`): the Worker in workerd against real peers on loopback,
// here the SigV4-verifying S3 server (Ceph RGW) of ../shared/tools/peers. `test/integration/peers.global.ts`
// uses a running S3 peer or starts one from the peers chroot.
import { defineConfig } from "vitest/config";
import { testWorker } from "./test/test-bindings";

export const S3_PEER = {
  endpoint: process.env.EDGEDIAL_S3_ENDPOINT ?? "http://127.0.0.1:7480",
  accessKeyId: process.env.EDGEDIAL_S3_ACCESS_KEY ?? "TESTACCESSKEY123",
  secretAccessKey: process.env.EDGEDIAL_S3_SECRET_KEY ?? "testsecretkey0123456789",
  bucket: process.env.EDGEDIAL_S3_BUCKET ?? "edgedial-integration",
};

export default defineConfig(async () => ({
  plugins: [
    await testWorker({
      // R2 S3 credentials pointed at the local S3 server: presigned URLs are real SigV4 URLs it verifies.
      R2_ACCOUNT_ID: "",
      R2_ACCESS_KEY_ID: S3_PEER.accessKeyId,
      R2_SECRET_ACCESS_KEY: S3_PEER.secretAccessKey,
      R2_BUCKET_NAME: S3_PEER.bucket,
      R2_S3_ENDPOINT: S3_PEER.endpoint,
      // Answered calls go to a call session: ARI's audio flows over external media (chan_websocket).
      VOICE_AGENT: "greeting",
    }),
  ],
  test: {
    include: ["test/integration/**/*.test.ts"],
    // Those run in Node, by vitest.integration-node.config.ts (the Worker as a process of its own).
    exclude: ["test/integration/node/**"],
    setupFiles: ["./test/setup.ts"],
    globalSetup: ["./test/integration/peers.global.ts", "./test/integration/sipp.global.ts", "./test/integration/sipp-echo.global.ts"],
    testTimeout: 30_000,
  },
}));
