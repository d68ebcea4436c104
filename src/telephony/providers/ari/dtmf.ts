// Keys pressed on a live Asterisk call: POST /channels/{channelId}/dtmf?dtmf=… on the callee's channel (the run's
// channel, not our media channel), so Asterisk itself sends them the way the channel negotiated (RFC 4733 events on
// PJSIP by default) and raises ChannelDtmfReceived at the far end. Asterisk's own timing (100 ms tone, 100 ms
// between) is ours too; `w` and `W` are its half-second and one-second pauses.
import { basicAuth, carrierFetch } from "../kit";
import { dtmfSent } from "../dtmf-kit";
import type { ProviderCalls } from "../types";
import { ariAuth, ariBase, ariEndpointRefusal } from "./calls";

export const ariSendDtmf: NonNullable<ProviderCalls["sendDtmf"]> = async (ctx, env, channelId, digits) => {
  const refusal = ariEndpointRefusal(ctx);
  if (refusal) throw new Error(refusal);
  const { user, password } = ariAuth(ctx);
  const res = await carrierFetch(
    `${ariBase(ctx)}/channels/${encodeURIComponent(channelId)}/dtmf?${new URLSearchParams({ dtmf: digits })}`,
    { method: "POST", headers: { Authorization: basicAuth(user, password), Accept: "application/json" } },
    env,
  );
  dtmfSent("Asterisk", res, res.json?.message);
};
