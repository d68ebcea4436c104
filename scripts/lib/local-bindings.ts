// The bindings a Worker run on this machine needs besides wrangler.jsonc (the demo, the benchmarks): fresh values for
// the required secrets, LOCAL_DEV, and the optional R2 S3 credentials left empty. One list, so a new secret is added
// in src/lib/settings.ts (REQUIRED_SECRETS) and freshSecrets, and every local runner follows.
import { freshSecrets } from "./deploy-plan.ts";

/** Optional settings that stay empty locally (uploads then go through the Worker's own signed URLs). */
export const OPTIONAL_R2_SETTINGS = ["R2_ACCOUNT_ID", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY", "R2_BUCKET_NAME"] as const;

export function localBindings(keyId = "l1"): Record<string, string> {
  return {
    ...freshSecrets(keyId),
    LOCAL_DEV: "true",
    // Locally the carrier speaks the greeting: the default voice agent runs on Workers AI, which is remote only.
    VOICE_AGENT: "",
    ...Object.fromEntries(OPTIONAL_R2_SETTINGS.map((name) => [name, ""])),
  };
}
