// The carrier simulator's shared shapes. The simulator is test and demo support: it speaks each carrier's
// REST contract, checks auth and parameters like the real API, answers errors in the
// carrier's own shape, and produces signed callbacks for an outcome a test asks for.

export type CarrierName = "twilio" | "plivo" | "vobiz" | "telnyx" | "vonage" | "cloudonix" | "exotel" | "ari";

export type Outcome = "answered" | "busy" | "no_answer" | "voicemail" | "failed" | "declined" | "canceled" | "timeout";

/** Credentials and keys a test puts into a telephony configuration, plus what the simulator keeps. */
export type Account = {
  id: string;
  provider: CarrierName;
  /** Fields exactly as the telephony configuration names them. */
  credentials: Record<string, string>;
  /** Private material the simulator signs with (never handed to edgedial). */
  secret: Record<string, unknown>;
  /** Provisioned applications (plivo, vobiz, telnyx, cloudonix). */
  applications: Array<{ id: string; name: string; url?: string }>;
  /** What the callee says on answered calls with live audio, one line per turn (16-bit PCM at 8 kHz); none: a tone. */
  calleeLines?: Int16Array[];
};

/** One HTTP request a carrier would make to us. */
export type Callback = {
  kind: "answer" | "status" | "stream";
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** For `stream`: the text frames the carrier would send after connecting. */
  frames?: string[];
};

export type SimCall = {
  id: string; // the carrier's call id
  provider: CarrierName;
  accountId: string;
  to: string;
  from: string;
  answerUrl?: string;
  statusUrl?: string;
  /** Plivo: answer/ring/hangup URLs separately. */
  urls: Record<string, string>;
  streamUrl?: string;
  /** Plivo/Vobiz request uuid (the call id is the CallUUID). */
  requestId?: string;
  amd: boolean;
  state: "queued" | "ringing" | "answered" | "ended";
  /** Callbacks produced by API actions (e.g. a hang-up), handed out with the next outcome or flush. */
  pending: Callback[];
  extra: Record<string, unknown>;
  createdAt: number;
};

/** A call coming in, kept in the simulator's state: the carrier's own fields in `c`, no detection, marked inbound. */
export function inboundCall(
  state: Pick<SimState, "calls">,
  c: Omit<SimCall, "urls" | "amd" | "pending" | "createdAt" | "extra"> & Partial<Pick<SimCall, "urls" | "extra">>,
): SimCall {
  const call: SimCall = { urls: {}, amd: false, pending: [], createdAt: Date.now(), ...c, extra: { ...c.extra, direction: "inbound" } };
  state.calls.set(call.id, call);
  return call;
}

export type RecordedRequest = { method: string; path: string; query: Record<string, string[]>; headers: Record<string, string>; body: string; at: number };

/**
 * A scripted failure; with `hangMs` the carrier sits on the request that long before answering it (a hung API);
 * `retryAfter` adds a `Retry-After` header to the error (429/503); `refuse` fails the connection itself, the
 * way a refused connect does, before any answer.
 */
export type Fault = { op: string; status: number; body?: unknown; times: number; hangMs?: number; retryAfter?: string; refuse?: boolean };

/** `stale`: signed with a time 400 s in the past; `expired` (vonage): a fresh-enough iat but an `exp` already passed. */
export type OutcomeOptions = { stale?: boolean; expired?: boolean; apiKey?: string; json?: boolean };

export interface SimState {
  accounts: Map<string, Account>;
  calls: Map<string, SimCall>;
  record(accountId: string, req: RecordedRequest): void;
  /** A fault queued for this account and operation, consumed once. */
  takeFault(accountId: string, op: string): Fault | null;
}

export interface Carrier {
  name: CarrierName;
  outcomes: readonly Outcome[];
  createAccount(id: string): Promise<Account>;
  /** The REST API; `path` is below the carrier prefix. Returns null for a path it does not know. */
  handle(state: SimState, req: Request, path: string, body: string): Promise<Response | null>;
  /** Signed callbacks for an outcome, in the carrier's order. */
  script(state: SimState, call: SimCall, outcome: Outcome, opts: OutcomeOptions): Promise<Callback[]>;
  /**
   * The carrier's own retry of a callback, signed afresh as it signs every delivery (a new nonce, timestamp or
   * JWT). Absent where a delivery carries nothing once-only (Twilio, unsigned carriers): the retry is the same bytes.
   */
  redeliver?(state: SimState, call: SimCall, cb: Callback): Promise<Callback>;
  /**
   * A callback scripted before the call's conversation and sent after it, as the carrier builds it at that moment
   * (its event timestamp, the call's duration so far): what the carrier reports must agree with the call that ran.
   */
  restamp?(state: SimState, call: SimCall, cb: Callback): Promise<Callback>;
  /**
   * The call's media socket closed while the call is up (not hung up through the API): what the carrier does next,
   * as it documents it, given the document that was running (the answer's, or the last redirect's). A request whose
   * answer is the call's next document is of kind `answer`; absent or empty: the call just ends.
   */
  mediaEnded?(state: SimState, call: SimCall, document: string): Promise<Callback[]>;
  /** The callee pressed a key: what the carrier reports beside its media stream (Telnyx's webhook, ARI's event), if anything. */
  pressed?(state: SimState, call: SimCall, digit: string): Promise<Callback[]>;
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

export const randomHex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");

export const E164 = /^\+[1-9]\d{6,14}$/;
export const DIGITS = /^[1-9]\d{6,14}$/;
