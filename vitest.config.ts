import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // Secrets for the test runtime only (never real values).
          bindings: {
            TEST_MIGRATIONS: migrations,
            ENCRYPTION_KEYS: "t1:3q2+7wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGho=",
            CALLBACK_SECRET: "test-callback-secret",
            UPLOAD_SIGNING_SECRET: "test-upload-secret",
            R2_ACCOUNT_ID: "",
            R2_ACCESS_KEY_ID: "",
            R2_SECRET_ACCESS_KEY: "",
            R2_BUCKET_NAME: "",
          },
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      exclude: ["test/integration/**"],
      setupFiles: ["./test/setup.ts"],
    },
  };
});
