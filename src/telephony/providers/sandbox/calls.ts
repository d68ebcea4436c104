// The sandbox speaks Twilio's protocol to the carrier simulator's Twilio (the simulator is a real outbound HTTP
// service, so the whole path runs as it does with a carrier: originate, signed callbacks, the media stream, the
// transfer's TwiML and person's call, a number's VoiceUrl). The simulator keeps one well-known account for it, so a
// sandbox configuration holds no credentials; the callee's behaviour travels in the originate request's `Sandbox*`
// parameters, which the real Twilio would never see.
import { createCall, originateForm, twilioCalls } from "../twilio/calls";
import { twilioInbound } from "../twilio/inbound";
import { personForm, twilioTransfer } from "../twilio/transfer";
import type { ConfigContext, ProviderCalls, ProviderEnv, ProviderInbound } from "../types";

/** The simulator's sandbox account (local only: nothing here is a secret). */
export const SANDBOX_ACCOUNT = { account_sid: `AC${"5a4db0c5".repeat(4)}`, auth_token: "edgedial-sandbox" };
/** Where `npm run dev` starts the simulator, unless CARRIER_BASE_URLS names another for `sandbox`. */
export const SANDBOX_SIMULATOR = "http://127.0.0.1:8788/twilio";

const asTwilio = (ctx: ConfigContext): ConfigContext => ({ ...ctx, config: { ...ctx.config, ...SANDBOX_ACCOUNT, amd_enabled: false } });
const toSimulator = (env: ProviderEnv): ProviderEnv => ({ ...env, baseUrls: { ...env.baseUrls, twilio: sandboxSimulatorUrl(env) } });

/** The simulator's Twilio for this environment (its control API, `/_sim`, is at the same origin). */
export const sandboxSimulatorUrl = (env: Pick<ProviderEnv, "baseUrls">): string => env.baseUrls.sandbox ?? SANDBOX_SIMULATOR;

/** Twilio's transfers, on the simulator: its person answers (cold: the `<Dial>`; warm: the whisper, then the conference). */
const sandboxTransfer: NonNullable<ProviderCalls["transfer"]> = {
  cold: (ctx, env, leg) => twilioTransfer.cold!(asTwilio(ctx), toSimulator(env), leg),
  async warm(ctx, env, leg) {
    // Twilio's call to the person, which rings as long as the configuration's callee does.
    const form = personForm(leg);
    form.append("SandboxAnswerAfterMs", String(ctx.config.answer_after_ms ?? 1500));
    const placed = await createCall(asTwilio(ctx), toSimulator(env), form);
    return placed.ok ? { ok: true, legId: placed.providerCallId } : { ok: false, message: placed.message };
  },
  progress: (ctx, env, leg, rawBody) => twilioTransfer.progress!(asTwilio(ctx), toSimulator(env), leg, rawBody),
};

/** Twilio's voice request; attaching an agent sets the number's VoiceUrl on the simulator's sandbox account, which owns every number. */
const sandboxInbound: ProviderInbound = {
  ...twilioInbound,
  route: (ctx, env, number, inboundUrl) => twilioInbound.route!(asTwilio(ctx), toSimulator(env), number, inboundUrl),
};

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
  transfer: sandboxTransfer,
  inbound: sandboxInbound,
};
