// The one interface every provider module implements. A provider folder
// (src/telephony/providers/<name>/) exports one `Provider`; the registry lists them.
// A provider has a configuration half (fields, masking, checklist) and a calling half (`calls`, `provision`).
import type { z } from "@hono/zod-openapi";

export const PROVIDER_NAMES = ["ari", "cloudonix", "plivo", "telnyx", "twilio", "vobiz", "vonage", "exotel", "sandbox"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export type FieldMeta = {
  name: string; // dotted path for nested fields, e.g. "external_pbx.agent_api.password"
  type: "string" | "boolean" | "integer" | "object" | "array";
  required: boolean;
  sensitive: boolean;
  description: string;
  /** The value applied on create when the field is omitted (absent when there is none). */
  default?: unknown;
  /** True when null is accepted (e.g. an optional id that is auto-provisioned when null). */
  nullable?: boolean;
};

export type ChecklistStep = {
  key: "credentials" | "caller_id" | "application" | "webhook_signing" | string;
  title: string;
  description: string;
  complete: boolean;
  blocks_outbound: boolean;
};

/** What a provider sees of a stored configuration: non-secret fields, decrypted secrets, provider state, numbers. */
export type ConfigContext = {
  id: number;
  orgId: number;
  config: Record<string, unknown>; // full config with secrets decrypted (only inside provider calls)
  // Provider-managed state. Keys read by the checklist: `credentials_error` and `application_error`
  // (the carrier's last message; a non-empty value marks the step incomplete / explains it).
  state: Record<string, unknown>;
  activeNumbers: string[];
  /**
   * Whether the organization lets its PBX URLs reach private addresses (SSRF guard), read when the context is
   * opened for dialing, so a policy turned off after the configuration was saved holds at the next fetch.
   * Absent counts as not allowed.
   */
  allowPrivatePbx?: boolean;
};

/** Carrier base URLs come from configuration; the real hosts are the defaults. */
export type ProviderEnv = {
  baseUrls: Partial<Record<ProviderName, string>>;
  publicBaseUrl: string;
  /** How long a carrier request may take (CARRIER_TIMEOUT_MS); absent means the 10 s default. */
  carrierTimeoutMs?: number;
  /** Originate retries when the carrier certainly placed nothing (CARRIER_RETRY_ATTEMPTS, CARRIER_RETRY_MAX_WAIT_MS); absent means the defaults. */
  originateRetry?: { attempts?: number; maxWaitMs?: number };
};

export type OriginateRequest = {
  runId: number;
  to: string;
  from: string | null;
  answerUrl: string; // carries the per-run token
  statusUrl: string; // carries the per-run token
  /** Our wss:// media URL (carries the per-run token); Exotel takes it in the originate request. */
  streamUrl?: string;
  /** A voice agent takes the call on the media path: carriers that stream on dial (Telnyx) ask for it here. */
  liveMedia?: boolean;
  timeoutSeconds?: number;
};

export type OriginateResult = { ok: true; providerCallId: string } | { ok: false; message: string; status?: number };

/** Normalized call statuses. */
export type CallStatus =
  | "queued"
  | "initiated"
  | "ringing"
  | "in_progress"
  | "completed"
  | "busy"
  | "no_answer"
  | "voicemail"
  | "declined"
  | "failed"
  | "canceled"
  | "unknown";

export type StatusUpdate = {
  providerCallId?: string;
  status: CallStatus;
  answeredBy?: string | null;
  durationSeconds?: number | null;
  error?: string | null;
  at?: string;
  /** Used instead of `status` when the run was never answered (e.g. Telnyx normal_clearing -> failed). */
  unansweredStatus?: CallStatus;
  /** A carrier's request id that precedes the call id (Plivo/Vobiz RequestUUID), for correlation. */
  requestId?: string;
};

/** The once-only part of a verified callback signature (a nonce, a JWT id), remembered until `expiresAtMs`. */
export type ReplayKey = { scheme: string; nonce: string; expiresAtMs: number };

/** The outcome of a credentials check; `message` is the carrier's own words (never a secret). */
export type CredentialsCheck = { ok: true } | { ok: false; message: string };

/**
 * Work around placing and ending a call, for a carrier whose outcomes do not arrive as HTTP callbacks (ARI reports
 * over an events socket that must be open before the call is placed). Gets the Worker's bindings.
 */
export type CallLifecycle = {
  /** Before the originate request; a refusal fails the call with its message, nothing is dialed. */
  beforeOriginate(env: Env, ctx: ConfigContext, runId: number): Promise<{ ok: true } | { ok: false; message: string }>;
  /** After the carrier refused the originate (or it threw). */
  originateFailed(env: Env, ctx: ConfigContext, runId: number): Promise<void>;
  /** Before we hang the call up ourselves. */
  beforeHangup(env: Env, ctx: ConfigContext, providerCallId: string): Promise<void>;
  /**
   * A number of the configuration got an inbound agent: where calls come in over our own socket (ARI), it is held
   * open from now on to hear them. A refusal keeps the agent from being attached, with its message.
   */
  listen?(env: Env, ctx: ConfigContext): Promise<{ ok: true } | { ok: false; message: string }>;
};

/** The audio on a carrier's media socket. */
export type MediaFormat = { codec: "mulaw" | "alaw" | "pcm16"; rate: 8000 | 16000 | 24000 };

/** One message on a carrier's media socket, read into what it means. */
export type MediaEvent =
  | { kind: "start"; streamId: string; callId: string | null; format: MediaFormat | null }
  | { kind: "audio"; payload: Uint8Array }
  | { kind: "mark"; name: string }
  | { kind: "dtmf"; digit: string }
  /** A turn the caller typed instead of saying (only a web call's page sends one), or (`typing`) is typing one. */
  | { kind: "text"; text: string }
  | { kind: "typing" }
  | { kind: "stop" };

/** A carrier's media stream protocol: its framing, codecs and control messages, both ways. */
export interface MediaAdapter {
  /** The wire format until (or unless) the stream's start names another. */
  format: MediaFormat;
  /** Reads one message; malformed or unknown ones read as nothing. */
  parse(data: string | ArrayBuffer): MediaEvent[];
  /** One frame of audio to play, in the wire format. */
  audio(frame: Uint8Array, streamId: string): string | ArrayBuffer;
  /** A mark the carrier echoes once the audio before it has played; absent: the session marks by its play clock. */
  mark?(name: string, streamId: string): string;
  /** Drops the audio the carrier still holds; absent: only what the session holds back is dropped. */
  clear?(streamId: string): string;
  /**
   * True where the carrier ends a stream only by closing its socket (no stop message): a close is the call's end.
   * Elsewhere a close without a stop is the media lost, and the session waits for the carrier to reconnect.
   */
  closeEndsCall?: boolean;
}

/** One hand-over of a live call to a person (see TransferRequest in the agent's seam). */
export type TransferLeg = {
  runId: number;
  /** The caller's call at the carrier (for ari: the caller's channel). */
  providerCallId: string;
  /** E.164 (it passed the organization's calling policy), or for a PBX a dial string or SIP URI. */
  to: string;
  /** The caller ID the person sees: the run's own caller ID (a number of the account's), null where it has none. */
  from: string | null;
  mode: "cold" | "warm";
  timeoutSeconds: number;
  /** Where the carrier reports the person's leg (warm) or the transfer's progress; carries the run's token. */
  statusUrl: string;
  /**
   * A URL of edgedial's that answers the carrier's document for the hand-over (`transfer.document`): for carriers
   * whose transfer fetches new instructions (Plivo's and Vobiz's `aleg_url`). Carries the run's token.
   */
  documentUrl: string;
  /**
   * Warm: what the person hears before the bridge: the same words as text, and as a WAV in the agent's voice when the
   * agent gave audio (a URL carrying the run's token; null: none, the carrier speaks the text).
   */
  whisper?: { url: string | null; text: string };
  /** Warm: a name for the meeting point both legs join, unique to this run and transfer (a conference's name). */
  room?: string;
};
/** `legId`: the person's leg the carrier dialed (warm), hung up when nobody answers in time. */
/**
 * `ringing`: the carrier is dialing the person and its later word (`progress`, or ari's events) settles the transfer,
 * also for a cold one (ari keeps the caller with the agent until the person answers); absent on a cold transfer: the
 * carrier has taken the caller.
 */
export type TransferResult = { ok: true; legId?: string; ringing?: boolean } | { ok: false; message: string };
/**
 * Where a transfer stands after one of its own callbacks (at `TransferLeg.statusUrl`): still under way (the person's
 * phone rings, the whisper plays), or settled. `connected`: the caller is with the person and edgedial has left.
 */
export type TransferProgress = { outcome: "pending" | "connected" | "no_answer" | "failed"; message?: string };

/** A call dialed in to one of a configuration's numbers, as the carrier's request to the inbound URL names it. */
export type InboundCall = {
  /** The dialed number (ours), as the carrier wrote it (Plivo and Vonage drop the +). */
  to: string;
  /** The caller's number, as the carrier wrote it (empty when withheld). */
  from: string;
  /** The carrier's id of the call. */
  callId: string;
};

/** Calls that come in: reading the carrier's request, its busy form, and pointing the carrier at edgedial. */
export interface ProviderInbound {
  /** The call a verified inbound request announces; null when it is no new call (another event, a malformed body). */
  read(request: Request, rawBody: string): InboundCall | null;
  /** The document that refuses the call as busy (the caller hears busy, not ringing); null where the carrier has none. */
  busyDocument(): { body: string; contentType: string } | null;
  /**
   * Verifies a request to the inbound URL where it must meet more than `verifyCallback` (which a run's callbacks
   * pass): Vonage's inbound GET, whose query its signature does not cover. Absent: `verifyCallback`.
   */
  verify?(ctx: ConfigContext, request: Request, rawBody: string): Promise<boolean>;
  /**
   * Points the carrier's routing for `number` (its application, or the number itself) at `inboundUrl`. Absent where
   * the carrier has no API for it: the setup checklist shows the URL to paste.
   */
  route?(ctx: ConfigContext, env: ProviderEnv, number: string, inboundUrl: string): Promise<void>;
  /**
   * Command-driven carriers (Telnyx): the call is answered, refused busy or told no by REST commands rather than by
   * the HTTP answer (then empty). `statusUrl`: where the answered call's later events go (its run's status URL).
   */
  commands?: InboundCommands;
}

export interface InboundCommands {
  answer(ctx: ConfigContext, env: ProviderEnv, call: InboundCall, o: { runId: number; streamUrl: string | null; statusUrl: string }): Promise<void>;
  busy(ctx: ConfigContext, env: ProviderEnv, call: InboundCall): Promise<void>;
  /** Answers the call to speak `text`, then hangs up (the rest follows the call's events, see `event`). */
  refuse(ctx: ConfigContext, env: ProviderEnv, call: InboundCall, text: string): Promise<void>;
  /** A verified event about a call with no run (a refused call's answered or speak.ended): acts on it. */
  event(ctx: ConfigContext, env: ProviderEnv, rawBody: string, text: string): Promise<void>;
}

export interface ProviderCalls {
  originate(ctx: ConfigContext, env: ProviderEnv, req: OriginateRequest): Promise<OriginateResult>;
  lifecycle?: CallLifecycle;
  hangup(ctx: ConfigContext, env: ProviderEnv, providerCallId: string): Promise<void>;
  /** Hands the call to a person through the carrier's own mechanism; absent for a mode the carrier does not offer. */
  transfer?: {
    cold?(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg): Promise<TransferResult>;
    warm?(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg): Promise<TransferResult>;
    /**
     * A verified callback at the leg's statusUrl (the person's leg, the carrier's report on its transfer), given the
     * leg it was asked with: acts on it (plays the whisper once the person answers, then bridges) and says where the
     * transfer stands. Absent where the transfer is settled when `cold`/`warm` answers.
     */
    progress?(ctx: ConfigContext, env: ProviderEnv, leg: TransferLeg, rawBody: string): Promise<TransferProgress>;
    /** The document the carrier fetches at the leg's `documentUrl` (e.g. `<Dial><Number>`), from what the run recorded. */
    document?(leg: TransferLeg): { body: string; contentType: string };
  };
  /** Presses keys on the call through the carrier's command, where it has one (else the session plays tones). */
  sendDtmf?(ctx: ConfigContext, env: ProviderEnv, providerCallId: string, digits: string): Promise<void>;
  /**
   * The longest text one speech action takes (one `<Say>`/`<Speak>`, NCCO talk action or speak command), counted
   * in UTF-8 bytes (never fewer than characters, so it holds however the carrier counts); null where the carrier
   * has no text-to-speech verb (exotel, ari). The one table of these limits: each provider states its own here, and
   * longer greetings are spoken as several actions (src/lib/speech.ts) and warned about by the agent validator.
   */
  maxSpeakChars: number | null;
  /** The answer document (TwiML, Plivo XML, NCCO, ...) that speaks `text` (split to fit maxSpeakChars) and hangs up. */
  answerDocument(text: string): { body: string; contentType: string };
  /** Verifies the carrier's own signature where it signs; returns false to refuse. */
  verifyCallback(ctx: ConfigContext, request: Request, rawBody: string): Promise<boolean>;
  /**
   * Whether a verified callback's body is covered by the signature. Where it is not (a URL-only signature, or only
   * our per-run token), a callback must name the run's own call id to be believed.
   */
  signsCallbackBody: boolean;
  /**
   * Schemes that carry a nonce or id: what makes this (already verified) callback once-only. A repeat inside
   * the window is refused as a replay. Absent or null where the carrier signs nothing once-only (Twilio).
   */
  replayKey?(ctx: ConfigContext, request: Request, rawBody: string): ReplayKey | null;
  /** Maps a callback into normalized status updates (may be none, e.g. for an answer request). */
  parseStatus(request: Request, rawBody: string): Promise<StatusUpdate[]>;
  /**
   * A read-only carrier request (fetch the account or balance) that tells whether the stored credentials work.
   * Absent where the carrier documents no such call: the verify route then answers 409.
   */
  verifyCredentials?(ctx: ConfigContext, env: ProviderEnv): Promise<CredentialsCheck>;
  /** Calls dialed in to the configuration's numbers; absent where the carrier takes none through edgedial. */
  inbound?: ProviderInbound;
  /** The carrier's media socket protocol, where the call's audio reaches a call session. */
  media?: MediaAdapter;
  /**
   * The answer document that connects the call's audio to our media socket (absent where no document does). With
   * `resumeUrl`, it also says what the carrier does when that socket drops: ask `resumeUrl` for the next document
   * (src/calls/resume/resume.ts answers it).
   */
  mediaDocument?(streamUrl: string, resumeUrl?: string): { body: string; contentType: string };
  /**
   * Whether a request to the resume URL asks for the next document. Absent: every one does. Vonage also posts the
   * websocket leg's other events there (started, answered, completed), which must leave the running NCCO alone.
   */
  resumeRequested?(rawBody: string): boolean;
  /**
   * Command-driven carriers (Telnyx) that report their stream stopping: the call id when this verified event says
   * so, else null; `restartStream` then starts a new stream to `streamUrl` on that call.
   */
  streamStopped?(rawBody: string): { callId: string; eventId: string } | null;
  restartStream?(ctx: ConfigContext, env: ProviderEnv, stopped: { callId: string; eventId: string }, streamUrl: string): Promise<void>;
  /** Command-driven carriers (Telnyx): act on a verified event, e.g. speak the greeting on answer, then hang up. */
  afterStatus?(ctx: ConfigContext, env: ProviderEnv, rawBody: string, greeting: () => Promise<string>): Promise<void>;
  /**
   * Carriers that report key presses by callback (Telnyx's call.dtmf.received): the call and the key this verified
   * callback reports, else null. The run's call session hears it (a press its stream reported too is heard once).
   */
  keyPressed?(rawBody: string): { callId: string; digit: string } | null;
}

export interface Provider {
  name: ProviderName;
  displayName: string;
  connectivity: "api" | "sip";
  /** True for a PBX (ari): numbers may be extensions, SIP URIs or dial strings. */
  pbx: boolean;
  /** Only local development (LOCAL_DEV) offers it (the sandbox): elsewhere it is not listed and cannot be created. */
  localOnly?: boolean;
  /** zod schema of the `config` variant on create (with `provider` literal and defaults). */
  createSchema: z.ZodObject;
  /** zod schema of the `config` variant on update (every field optional; no defaults applied). */
  updateSchema: z.ZodObject;
  /** Dotted paths of the sensitive fields (masked on read, encrypted at rest). */
  sensitive: readonly string[];
  fields: readonly FieldMeta[];
  docsUrl: string;
  supportsTrunks: boolean;
  /**
   * Readiness steps derived from the stored configuration. Readiness never needs a plaintext, so here
   * `ctx.config` carries masks in place of secrets (and null where a nullable secret is unset).
   */
  steps(ctx: ConfigContext): ChecklistStep[];
  /** cloudonix only: carrier-supplied SIP connection details. */
  sipConnectivity?(ctx: ConfigContext): unknown;
  /** Creates the carrier application when its id is omitted; returns state to merge. */
  provision?(ctx: ConfigContext, env: ProviderEnv): Promise<{ state: Record<string, unknown>; config?: Record<string, unknown> }>;
  calls?: ProviderCalls;
}
