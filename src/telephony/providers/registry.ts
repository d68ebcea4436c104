// The one list of providers. Adding a carrier: a folder under providers/ and one line here.
import { ari } from "./ari";
import { cloudonix } from "./cloudonix";
import { exotel } from "./exotel";
import { plivo } from "./plivo";
import { sandbox } from "./sandbox";
import { telnyx } from "./telnyx";
import { twilio } from "./twilio";
import { vobiz } from "./vobiz";
import { vonage } from "./vonage";
import { PROVIDER_NAMES, type Provider, type ProviderName } from "./types";
import { registerSpeechLimits } from "../../workflows/speech-limits";

export const PROVIDERS: Record<ProviderName, Provider> = { ari, cloudonix, plivo, telnyx, twilio, vobiz, vonage, exotel, sandbox };

/** In the contract's order (PROVIDER_NAMES), for listings and the OpenAPI union. */
export const PROVIDER_LIST: readonly Provider[] = PROVIDER_NAMES.map((n) => PROVIDERS[n]);

// The agent validator warns about greetings longer than a carrier speaks at once.
registerSpeechLimits(PROVIDER_LIST.flatMap((p) => (p.calls?.maxSpeakChars ? [{ provider: p.name, maxChars: p.calls.maxSpeakChars }] : [])));

export function isProviderName(name: string): name is ProviderName {
  return Object.hasOwn(PROVIDERS, name);
}

export function getProvider(name: string): Provider {
  if (!isProviderName(name)) throw new Error(`Unknown telephony provider: ${name}`);
  return PROVIDERS[name];
}
