// Vonage calls that come in: the application's answer webhook (POST, so the signed JWT's payload_hash covers it) with
// `to`, `from` and `uuid` is the new call, answered
// with the NCCO a dialed call gets. Vonage has no busy refusal in an NCCO (the answer webhook comes once the call is
// answered), so over the cap the caller is told the line is busy and the NCCO ends. Attaching reads the application
// (GET /v2/applications/{id}) and writes it back (PUT replaces it) with the voice answer_url and event_url changed,
// its name, keys and other capabilities kept.
import { basicAuth, baseUrl, carrierFetch, jsonOrNull, str } from "../kit";
import type { ProviderInbound } from "../types";
import { problemMessage, verifyVonageSignedCallback, VONAGE_API } from "./calls";

/** What a caller over the cap hears before the call ends. */
export const VONAGE_BUSY_TEXT = "All our lines are busy right now. Please call again in a few minutes. Goodbye.";

export const vonageInbound: ProviderInbound = {
  read(request, rawBody) {
    const p: Record<string, unknown> = request.method === "GET" ? Object.fromEntries(new URL(request.url).searchParams) : (jsonOrNull(rawBody) ?? {});
    // Events (the event_url's posts) carry a status; the answer webhook does not.
    if (p.status !== undefined || !str(p.uuid) || !str(p.to)) return null;
    return { to: str(p.to), from: str(p.from ?? p.from_user), callId: str(p.uuid) };
  },

  // With a signature secret, every inbound request is a signed POST. A GET is refused even with a valid JWT: its
  // parameters (the caller's number among them) are in the query, which the JWT's payload_hash (of the body) does
  // not cover, and attaching sets the answer URL to POST. Without a secret, the configuration's token alone.
  async verify(ctx, request, rawBody) {
    const secret = str(ctx.config.signature_secret);
    if (!secret) return true;
    if (request.method !== "POST") return false;
    return verifyVonageSignedCallback({ authorization: request.headers.get("authorization"), rawBody, secret, apiKey: str(ctx.config.api_key) });
  },

  busyDocument: () => ({ body: JSON.stringify([{ action: "talk", text: VONAGE_BUSY_TEXT }]), contentType: "application/json" }),

  async route(ctx, env, _number, inboundUrl) {
    const id = str(ctx.config.application_id);
    const url = `${baseUrl(env, "vonage", VONAGE_API)}/v2/applications/${encodeURIComponent(id)}`;
    const headers = { Authorization: basicAuth(str(ctx.config.api_key), str(ctx.config.api_secret)), Accept: "application/json" };
    const got = await carrierFetch(url, { method: "GET", headers }, env);
    if (got.status !== 200 || !got.json?.name)
      throw new Error(`Vonage: could not read application ${id} (HTTP ${got.status}): ${problemMessage(got.json) ?? got.text.slice(0, 200)}`);
    const app = got.json;
    const voice = app.capabilities?.voice ?? {};
    const body = {
      name: app.name,
      ...(app.keys?.public_key ? { keys: { public_key: app.keys.public_key } } : {}),
      ...(app.privacy ? { privacy: app.privacy } : {}),
      capabilities: {
        ...app.capabilities,
        voice: {
          ...voice,
          webhooks: {
            ...voice.webhooks,
            answer_url: { address: inboundUrl, http_method: "POST" },
            event_url: { address: inboundUrl, http_method: "POST" },
          },
        },
      },
    };
    const res = await carrierFetch(url, { method: "PUT", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify(body) }, env);
    if (res.status < 200 || res.status >= 300)
      throw new Error(`Vonage refused to update the application (HTTP ${res.status}): ${problemMessage(res.json) ?? res.text.slice(0, 200)}`);
  },
};
