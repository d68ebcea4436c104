// The sandbox speaks Twilio's protocol to the carrier simulator's Twilio (the simulator is a real outbound HTTP
// service, so the whole path runs as it does with a carrier: originate, signed callbacks, the media stream). The
// simulator keeps one well-known account for it, so a sandbox configuration holds no credentials; the callee's
// behaviour travels in the originate request's `Sandbox*` parameters, which the real Twilio would never see.
import { createCall, originateForm, twilioCalls } from "../twilio/calls";
import type { ConfigContext, ProviderCalls, ProviderEnv } from "../types";

/** The simulator's sandbox account (local only: nothing here is a secret). */
export const SANDBOX_ACCOUNT = { account_sid: `AC${"5a4db0c5".repeat(4)}`, auth_token: "edgedial-sandbox" };
/** Where `npm run dev` starts the simulator, unless CARRIER_BASE_URLS names another for `sandbox`. */
export const SANDBOX_SIMULATOR = "http://127.0.0.1:8788/twilio";

const asTwilio = (ctx: ConfigContext): ConfigContext => ({ ...ctx, config: { ...ctx.config, ...SANDBOX_ACCOUNT, amd_enabled: false } });
const toSimulator = (env: ProviderEnv): ProviderEnv => ({ ...env, baseUrls: { ...env.baseUrls, twilio: env.baseUrls.sandbox ?? SANDBOX_SIMULATOR } });

export const sandboxCalls: ProviderCalls = {
  ...twilioCalls,
  verifyCredentials: undefined,
  originate(ctx, env, req) {
    const twilio = asTwilio(ctx);
    const form = originateForm(twilio, req);
    form.append("SandboxCallee", typeof ctx.config.callee === "string" ? ctx.config.callee : "answered");
    form.append("SandboxAnswerAfterMs", String(ctx.config.answer_after_ms ?? 1500));
    return createCall(twilio, toSimulator(env), form);
  },
  hangup: (ctx, env, id) => twilioCalls.hangup(asTwilio(ctx), toSimulator(env), id),
  verifyCallback: (ctx, request, rawBody) => twilioCalls.verifyCallback(asTwilio(ctx), request, rawBody),
};
