// The simulator's single Durable Object: every carrier's state lives here (accounts, calls, recorded
// requests, queued faults), kept in its storage (store.ts) so an eviction or a restart loses none of it, and it
// holds the ARI events sockets, which need cross-request I/O (and do not survive a restart).
import { DurableObject } from "cloudflare:workers";
import { base64ToBytes, pcm16FromBytes } from "../../lib/audio/pcm";
import { DoSql } from "../../lib/do-sql";
import { ari, placeAriInbound, type AriSockets } from "./carriers/ari";
import { cloudonix } from "./carriers/cloudonix";
import { exotel } from "./carriers/exotel";
import { plivo } from "./carriers/plivo";
import { telnyx } from "./carriers/telnyx";
import { twilio } from "./carriers/twilio";
import { vobiz } from "./carriers/vobiz";
import { vonage } from "./carriers/vonage";
import {
  json,
  randomHex,
  type Account,
  type Callback,
  type Carrier,
  type CarrierName,
  type Fault,
  type Outcome,
  type OutcomeOptions,
  type RecordedRequest,
  type SimCall,
  type SimState,
} from "./types";
import type { CalleeStream } from "./media/callee";
import { playCallee, streamUrlIn } from "./media/play";
import { inboundCompleted, PERSON_ON_LINE_MS, SANDBOX_ACCOUNT_ID, sandboxAccount, sandboxPlan, transferIn } from "./sandbox";
import { reach } from "./reach";
import { SimStore } from "./store";
import { twilioSign } from "./sign";
import { addNumber, listNumbers, placeInbound, twilioNumbersApi } from "./inbound";

export type PlayRequest = OutcomeOptions & {
  outcome: Outcome;
  /** Each status callback twice (carriers retry). */
  duplicate?: boolean;
  /** Status callbacks in reverse order (carriers deliver concurrently). */
  reverse?: boolean;
  /** Send the callbacks from the simulator itself (the local demo); tests deliver them to the Worker. */
  deliver?: boolean;
};

export class CarrierSim extends DurableObject<Record<string, unknown>> implements SimState, AriSockets {
  // In memory for the carriers to work on; written back to storage after every request (persist).
  accounts = new Map<string, Account>();
  calls = new Map<string, SimCall>();
  private faults = new Map<string, Fault[]>();
  private sockets = new Map<string, WebSocket[]>();
  /** The sandbox callee's live streams by call id (sockets: memory only), for its key presses and a transfer's end. */
  private callees = new Map<string, CalleeStream>();
  private readonly carriers: Record<CarrierName, Carrier>;
  private readonly store: SimStore;

  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.carriers = { twilio, plivo, vobiz, telnyx, vonage, cloudonix, exotel, ari: ari(this) };
    this.store = new SimStore(new DoSql(ctx.storage));
    void ctx.blockConcurrencyWhile(async () => {
      const mem = await this.store.load();
      this.accounts = mem.accounts;
      this.calls = mem.calls;
      this.faults = mem.faults;
      // The sandbox's account exists without being asked for (sandbox.ts).
      if (!this.accounts.has(SANDBOX_ACCOUNT_ID)) this.accounts.set(SANDBOX_ACCOUNT_ID, sandboxAccount(this.store.lines(SANDBOX_ACCOUNT_ID)));
      this.persist();
    });
  }

  /** Writes what the last request (or a background step of a call) changed to storage. */
  private persist(): void {
    this.store.save({ accounts: this.accounts, calls: this.calls, faults: this.faults });
  }

  record(accountId: string, req: RecordedRequest): void {
    this.store.record(accountId, req);
  }

  takeFault(accountId: string, op: string): Fault | null {
    const list = this.faults.get(accountId) ?? [];
    const f = list.find((x) => x.op === op && x.times > 0);
    if (!f) return null;
    f.times -= 1;
    return f;
  }

  // --- ARI sockets ---------------------------------------------------------------------------

  accept(account: Account): Response {
    const pair = new WebSocketPair();
    const server = pair[1];
    server.accept();
    const old = this.sockets.get(account.id) ?? [];
    for (const ws of old) {
      // One socket per application: the newer wins, the older is told so.
      try {
        ws.send(JSON.stringify({ type: "ApplicationReplaced", timestamp: new Date().toISOString(), application: account.credentials.app_name }));
        ws.close(1000, "replaced");
      } catch {
        // already gone
      }
    }
    this.sockets.set(account.id, [server]);
    server.addEventListener("close", () => {
      const list = this.sockets.get(account.id) ?? [];
      this.sockets.set(
        account.id,
        list.filter((w) => w !== server),
      );
    });
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  send(accountId: string, events: unknown[]): number {
    const list = this.sockets.get(accountId) ?? [];
    for (const ws of list) for (const e of events) ws.send(JSON.stringify(e));
    return list.length;
  }

  drop(accountId: string, code: number, reason: string): number {
    const list = this.sockets.get(accountId) ?? [];
    for (const ws of list) ws.close(code, reason);
    this.sockets.set(accountId, []);
    return list.length;
  }

  // --- HTTP ----------------------------------------------------------------------------------

  async fetch(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const [, first, ...rest] = url.pathname.split("/");
    if (first === "_sim") {
      try {
        return await this.control(req, rest);
      } finally {
        this.persist();
      }
    }
    const carrier = this.carriers[first as CarrierName];
    if (!carrier) return json(404, { message: `The simulator has no carrier named ${first}` });
    const body = req.method === "GET" || req.method === "HEAD" ? "" : new TextDecoder().decode(await req.arrayBuffer());
    // The carrier sees this request's own view of the state, so a hang fault it takes delays only this answer.
    let hangMs = 0;
    let taken: Fault | null = null;
    const scoped: SimState = {
      accounts: this.accounts,
      calls: this.calls,
      record: (accountId, r) => this.record(accountId, r),
      takeFault: (accountId, op) => {
        const f = this.takeFault(accountId, op);
        if (f?.hangMs) hangMs = f.hangMs;
        if (f) taken = { ...f };
        return f;
      },
    };
    const before = new Set(this.calls.keys());
    let res: Response | null;
    try {
      res = await carrier.handle(scoped, req, "/" + rest.join("/"), body);
      if (!res && first === "twilio") res = await twilioNumbersApi(scoped, req, "/" + rest.join("/"), body);
    } finally {
      this.persist();
    }
    if (first === "twilio") {
      this.playSandbox(before, body);
      if (res?.ok) this.sandboxUpdated("/" + rest.join("/"), body);
    }
    if (hangMs) await new Promise((r) => setTimeout(r, hangMs));
    const fault = taken as Fault | null;
    if (fault?.refuse) throw new Error(`connect ECONNREFUSED ${url.host}`);
    if (res && fault?.retryAfter !== undefined) {
      const headers = new Headers(res.headers);
      headers.set("Retry-After", fault.retryAfter);
      return new Response(res.body, { status: res.status, headers });
    }
    return res ?? json(404, { message: `Unknown ${first} path ${url.pathname}` });
  }

  /** The sandbox's callee plays the calls just placed on its account, by itself (see sandbox.ts). */
  private playSandbox(before: Set<string>, body: string) {
    for (const [id, call] of this.calls) {
      if (before.has(id)) continue;
      const plan = sandboxPlan(call, new URLSearchParams(body));
      if (!plan) continue;
      const person = typeof call.extra.twiml === "string" ? transferIn(call.extra.twiml) : {};
      const play = async () => {
        if (call.state === "ended") return;
        try {
          if (person.room && plan.outcome === "answered") await this.answerPerson(call, person.whisper);
          else await this.finish(call, await this.carriers.twilio.script(this, call, plan.outcome, {}), { outcome: plan.outcome, deliver: true });
        } finally {
          this.persist();
        }
      };
      setTimeout(() => void play().catch(() => {}), plan.afterMs);
    }
  }

  /**
   * A warm transfer's person (a sandbox call whose TwiML plays the whisper, then joins a conference): answers, as
   * Twilio reports it; hears the whisper (Twilio fetches the `<Play>` URL); talks with the caller a moment; hangs up.
   */
  private async answerPerson(call: SimCall, whisper?: string) {
    const callbacks = await this.carriers.twilio.script(this, call, "answered", {});
    const completed = callbacks.pop();
    call.state = "answered";
    call.extra.answeredAtMs = Date.now();
    // The answered status moves the caller into the conference (edgedial's transfer progress).
    for (const cb of callbacks) await send(cb).catch(() => null);
    if (whisper) {
      const res = await reach(whisper).catch(() => null);
      call.extra.whisper = { status: res?.status ?? 0, bytes: res ? (await res.arrayBuffer()).byteLength : 0 };
    }
    this.persist();
    await new Promise((r) => setTimeout(r, PERSON_ON_LINE_MS));
    call.state = "ended";
    call.extra.mediaEndedAtMs = Date.now();
    if (completed) await send((await this.carriers.twilio.restamp?.(this, call, completed)) ?? completed).catch(() => null);
  }

  /**
   * A sandbox call's TwiML replaced by a transfer's (Twilio's "modify a call in progress"): the `<Connect><Stream>` it
   * ran ends, and the caller is with the simulated person: the number a cold `<Dial>` rang (who answers), or the warm
   * transfer's person already in the conference the caller now joins. Recorded in the call's `transfer`.
   */
  private sandboxUpdated(path: string, body: string) {
    const sid = /\/Calls\/([^/]+)\.json$/.exec(path)?.[1];
    const call = sid ? this.calls.get(sid) : undefined;
    const form = new URLSearchParams(body);
    const twiml = form.get("Twiml");
    if (!call || call.accountId !== SANDBOX_ACCOUNT_ID || twiml === null || form.get("Status") !== null) return;
    const asked = transferIn(twiml);
    if (asked.dialed) call.extra.transfer = { mode: "cold", to: asked.dialed, answered: true, at: Date.now() };
    else if (asked.room) {
      const person = [...this.calls.values()].find(
        (c) => c.id !== call.id && c.accountId === SANDBOX_ACCOUNT_ID && typeof c.extra.twiml === "string" && transferIn(c.extra.twiml).room === asked.room,
      );
      call.extra.transfer = { mode: "warm", to: person?.to ?? null, person_call: person?.id ?? null, room: asked.room, at: Date.now() };
      if (person) person.extra.bridgedWith = call.id;
    } else return;
    const callee = this.callees.get(call.id);
    if (callee && !callee.closed) callee.hangup();
    this.persist();
  }

  private async control(req: Request, parts: string[]): Promise<Response> {
    const body: any = req.method === "POST" ? await req.json().catch(() => ({})) : {};
    const [what, id, action] = parts;
    // What the sandbox's callee says on answered calls (base64 16-bit PCM at 8 kHz, one line per turn).
    if (what === "sandbox" && req.method === "POST") {
      const lines = Array.isArray(body.callee_lines) ? body.callee_lines.filter((l: unknown) => typeof l === "string") : [];
      this.store.putLines(SANDBOX_ACCOUNT_ID, lines);
      // Its numbers (their VoiceUrl) stay: a restart of `npm run dev` gives the lines again.
      const secret = this.accounts.get(SANDBOX_ACCOUNT_ID)?.secret ?? {};
      this.accounts.set(SANDBOX_ACCOUNT_ID, { ...sandboxAccount(lines.map((b64: string) => pcm16FromBytes(base64ToBytes(b64)))), secret });
      return json(200, { id: SANDBOX_ACCOUNT_ID, lines: lines.length });
    }
    if (what === "accounts" && !id && req.method === "POST") {
      const carrier = this.carriers[body.provider as CarrierName];
      if (!carrier) return json(400, { message: "unknown provider" });
      const account = await carrier.createAccount(`acct-${randomHex(6)}`);
      // The callee's lines, as base64 16-bit PCM at 8 kHz (the demo's espeak-ng clips).
      const lines = Array.isArray(body.callee_lines) ? body.callee_lines.filter((l: unknown) => typeof l === "string") : [];
      if (lines.length) {
        account.calleeLines = lines.map((b64: string) => pcm16FromBytes(base64ToBytes(b64)));
        this.store.putLines(account.id, lines);
      }
      await this.store.prepare(account);
      this.accounts.set(account.id, account);
      return json(200, { id: account.id, provider: account.provider, credentials: account.credentials });
    }
    const account = what === "accounts" ? this.accounts.get(id) : undefined;
    if (what === "accounts" && !account) return json(404, { message: "no such account" });
    if (account && action === "requests") return json(200, this.store.requests(account.id));
    if (account && action === "applications") return json(200, account.applications);
    // The account's phone numbers, and a caller dialing one of them (the carrier's signed request, for the test to send).
    if (account && action === "numbers") return json(200, req.method === "POST" ? addNumber(account, String(body.number)) : listNumbers(account));
    if (account && action === "inbound" && req.method === "POST") {
      // Asterisk's caller arrives on the events socket (a StasisStart), not as a request to a URL.
      if (account.provider === "ari")
        return json(200, placeAriInbound(this, account, this, { to: String(body.to), from: String(body.from ?? ""), asArgument: body.as_argument === true }));
      try {
        const callback = await placeInbound(this, account, { to: String(body.to), from: String(body.from ?? ""), url: body.url, stale: body.stale === true });
        // The sandbox's caller (`deliver`): the simulator sends the voice request itself and its callee talks on the stream.
        const call =
          account.id === SANDBOX_ACCOUNT_ID && body.deliver === true ? this.calls.get(new URLSearchParams(callback.body).get("CallSid") ?? "") : undefined;
        if (call) {
          const completed = await inboundCompleted(call, account);
          return this.finish(call, [callback, ...(completed ? [completed] : [])], { outcome: "answered", deliver: true });
        }
        return json(200, { callback });
      } catch (err) {
        return json(400, { message: String((err as Error).message) });
      }
    }
    if (account && action === "faults" && req.method === "POST") {
      const list = this.faults.get(account.id) ?? [];
      const hangMs = Number(body.hang_ms ?? 0);
      list.push({
        op: String(body.op),
        status: Number(body.status ?? 500),
        body: body.message,
        times: Number(body.times ?? 1),
        ...(hangMs > 0 ? { hangMs } : {}),
        ...(body.retry_after !== undefined ? { retryAfter: String(body.retry_after) } : {}),
        ...(body.refuse === true ? { refuse: true } : {}),
      });
      this.faults.set(account.id, list);
      return json(200, { ok: true });
    }
    if (account && action === "calls") return json(200, [...new Set(this.calls.values())].filter((c) => c.accountId === account.id).map(view));
    if (account && action === "drop")
      return json(200, { dropped: this.drop(account.id, Number(body.code ?? 1011), String(body.reason ?? "dropped by the simulator")) });
    if (account && action === "send") return json(200, { sockets: this.send(account.id, body.events ?? []) });
    if (account && action === "sockets") return json(200, { sockets: (this.sockets.get(account.id) ?? []).length });

    if (what === "calls" && id) {
      const call = this.calls.get(decodeURIComponent(id));
      if (!call) return json(404, { message: "no such call" });
      if (!action) return json(200, view(call));
      if (action === "flush") return this.finish(call, [], body);
      // The call's stream socket closed with the call up: what the carrier does next, given the running document.
      if (action === "media-ended") {
        const carrier = this.carriers[call.provider];
        return this.finish(call, carrier.mediaEnded ? await carrier.mediaEnded(this, call, String(body.document ?? "")) : [], body);
      }
      // The callee pressed keys: what the carrier reports of it beside the media stream (the stream is the test's own).
      // The callee picked up and stays on the line, the test driving the rest (a command needs a live call).
      if (action === "pick-up") {
        call.state = "answered";
        return json(200, view(call));
      }
      if (action === "press" && call.accountId === SANDBOX_ACCOUNT_ID) {
        // The sandbox's callee presses keys on its own live stream: Twilio's dtmf message for each.
        const callee = this.callees.get(call.id);
        const digits = String(body.digits ?? "");
        if (!callee || callee.closed) return json(409, { message: "The call has no live audio in the simulator: it is not answered yet, or over" });
        callee.press(digits);
        call.extra.pressed = `${(call.extra.pressed as string | undefined) ?? ""}${digits}`;
        return json(200, { id: call.id, pressed: digits });
      }
      if (action === "press") {
        const pressed: Callback[] = [];
        for (const digit of String(body.digits ?? "")) pressed.push(...((await this.carriers[call.provider].pressed?.(this, call, digit)) ?? []));
        return this.finish(call, pressed, body);
      }
      if (action === "redeliver") {
        const carrier = this.carriers[call.provider];
        const cb = body.callback as Callback;
        return json(200, { callback: carrier.redeliver ? await carrier.redeliver(this, call, cb) : cb });
      }
      if (action === "outcome") {
        const carrier = this.carriers[call.provider];
        if (!carrier.outcomes.includes(body.outcome)) return json(400, { message: `${call.provider} does not distinguish ${body.outcome}` });
        return this.finish(call, await carrier.script(this, call, body.outcome, body), body);
      }
    }
    return json(404, { message: "unknown control path" });
  }

  /** Hands out pending + scripted callbacks, duplicated / reordered as asked, or delivers them (demo). */
  private async finish(call: SimCall, scripted: Callback[], opts: PlayRequest): Promise<Response> {
    let list = [...call.pending.splice(0), ...scripted];
    if (opts.reverse) {
      const statuses = list.filter((c) => c.kind === "status").reverse();
      list = [...list.filter((c) => c.kind !== "status"), ...statuses];
    }
    if (opts.duplicate) {
      // The carrier's retry of each status callback, signed as it signs every delivery.
      const carrier = this.carriers[call.provider];
      const twice: Callback[] = [];
      for (const c of list) twice.push(...(c.kind === "status" ? [c, carrier.redeliver ? await carrier.redeliver(this, call, c) : c] : [c]));
      list = twice;
    }
    if (!opts.deliver) return json(200, { callbacks: list });
    const results = [];
    for (const [i, cb] of list.entries()) {
      if (cb.kind === "stream") continue;
      // When the call was answered and when its media ended: what the carrier reports later (restamp) counts from them.
      if (cb.kind === "answer") call.extra.answeredAtMs = Date.now();
      const res = await send(cb).catch((err: Error) => err);
      // Nobody there (the test pool's simulator cannot reach the Worker): say so rather than fail the request.
      if (res instanceof Error) return json(200, { callbacks: list, delivered: results, error: `${cb.url}: ${res.message}` });
      const text = await res.text();
      results.push({ kind: cb.kind, url: cb.url, status: res.status, body: text });
      // An answer that connects the call's audio: the callee talks on the stream first, and the rest of the call's
      // callbacks follow when it hangs up (in the background: the caller is answered now).
      const stream = cb.kind === "answer" && res.ok ? streamUrlIn(text) : null;
      if (stream) {
        const rest = list.slice(i + 1).filter((c) => c.kind !== "stream");
        if (call.state === "ended") call.state = "answered";
        this.ctx.waitUntil(
          (async () => {
            const account = this.accounts.get(call.accountId);
            // Twilio signs the stream's upgrade request as its other requests: X-Twilio-Signature over the wss:// URL.
            const signed: Record<string, string> =
              call.provider === "twilio" && account ? { "X-Twilio-Signature": await twilioSign(account.credentials.auth_token, stream, []) } : {};
            await playCallee(call.provider, stream, call.id, account?.calleeLines, signed, (c) => this.callees.set(call.id, c)).catch(() => {});
            this.callees.delete(call.id);
            call.extra.mediaEndedAtMs = Date.now();
            // Transferred: the caller talks with the simulated person until the person hangs up.
            if (call.extra.transfer) await new Promise((r) => setTimeout(r, PERSON_ON_LINE_MS));
            // The call ended when the callee hung up, not when its outcome was scripted (a transfer or a key sent
            // during the conversation needs the call in progress).
            call.state = "ended";
            this.persist();
            for (const scripted of rest) {
              const c = (await this.carriers[call.provider].restamp?.(this, call, scripted).catch(() => null)) ?? scripted;
              await send(c).catch(() => {});
            }
            this.persist();
          })(),
        );
        return json(200, { callbacks: list, delivered: results, media: stream });
      }
    }
    return json(200, { callbacks: list, delivered: results });
  }
}

/** Sends a callback as the carrier would. */
const send = (c: Callback) => reach(c.url, { method: c.method, headers: c.headers, body: c.method === "GET" ? undefined : c.body });

function view(c: SimCall) {
  return {
    id: c.id,
    provider: c.provider,
    to: c.to,
    from: c.from,
    state: c.state,
    answerUrl: c.answerUrl,
    statusUrl: c.statusUrl,
    streamUrl: c.streamUrl,
    urls: c.urls,
    requestId: c.requestId,
    amd: c.amd,
    extra: c.extra,
  };
}
