// Plivo and Vobiz share a REST contract: JSON Call/ with `request_uuid`, the
// CallUUID first seen in the ring/answer/hangup callbacks, Application/ for provisioning. They differ in
// auth (Basic vs X-Auth headers), prefix and callback signatures.

import { afterStream, redirectRequest } from "./after-stream";
import { transferCall } from "./plivo-transfer";
import {
  json,
  randomHex,
  type Account,
  type Callback,
  type Carrier,
  type CarrierName,
  type Outcome,
  type OutcomeOptions,
  type SimCall,
  type SimState,
} from "../types";

type Family = {
  name: CarrierName;
  /** The path prefix below the carrier segment, e.g. "/v1/Account" or "/api/v1/Account". */
  accountPrefix: string;
  authenticate(req: Request, authId: string, account: Account): boolean;
  /** Headers that sign a callback to `url` with `params` (form) body. */
  sign(account: Account, url: string, params: Array<[string, string]>): Promise<Record<string, string>>;
  digitsTo: RegExp;
};

const uuid = () => crypto.randomUUID();

/** "Send digits" on a live call (Plivo's API, which Vobiz mirrors): 202 once the call is up; 0-9, *, #, A-D, w/W pauses. */
async function sendDigits(
  state: SimState,
  req: Request,
  path: string,
  body: string,
  account: Account | undefined,
  callUuid: string,
  authentic: (a: Account) => boolean,
) {
  if (!account || !authentic(account)) return err(401, "Authentication failed: invalid auth id or token");
  state.record(account.id, { method: req.method, path, query: {}, headers: Object.fromEntries(req.headers), body, at: Date.now() });
  if (req.method !== "POST") return err(405, "method not allowed");
  let p: any;
  try {
    p = JSON.parse(body || "{}");
  } catch {
    return err(400, "invalid JSON body");
  }
  const call = [...state.calls.values()].find((c) => c.accountId === account.id && c.extra.callUuid === callUuid);
  if (call?.state !== "answered") return err(404, "call not found or not in progress");
  if (typeof p.digits !== "string" || !/^[0-9*#A-DwW]+$/.test(p.digits)) return err(400, "digits must be 0-9, *, #, A-D, w or W");
  if (p.leg !== undefined && p.leg !== "aleg" && p.leg !== "bleg") return err(400, "leg must be aleg or bleg");
  return json(202, { api_id: uuid(), message: "digits sent" });
}
const err = (status: number, message: string) => json(status, { api_id: uuid(), error: message });
const DIGITS = /^[1-9]\d{6,14}$/;

/** The calls nobody answered: the hangup callback's CallStatus and cause, and whether the ring callback came first. */
const UNANSWERED: Partial<Record<Outcome, { status: string; code: string; name: string; source: string; rang: boolean }>> = {
  busy: { status: "busy", code: "3010", name: "Busy Line", source: "Carrier", rang: true },
  declined: { status: "busy", code: "3020", name: "Rejected", source: "Call recipient", rang: true },
  no_answer: { status: "no-answer", code: "3000", name: "No Answer", source: "Carrier", rang: true },
  failed: { status: "failed", code: "2000", name: "Invalid Destination Address", source: "Carrier", rang: false },
  timeout: { status: "timeout", code: "0", name: "Unknown", source: "Carrier", rang: false },
  canceled: { status: "cancel", code: "1000", name: "Cancelled by API", source: "API Request", rang: true },
};

export function plivoFamily(f: Family): Carrier {
  const find = (state: SimState, authId: string) => [...state.accounts.values()].find((a) => a.provider === f.name && a.credentials.auth_id === authId);

  async function callback(account: Account, url: string, fields: Record<string, string>, kind: Callback["kind"], opts: OutcomeOptions): Promise<Callback> {
    const params = Object.entries(fields);
    const body = opts.json ? JSON.stringify(fields) : new URLSearchParams(params).toString();
    return {
      kind,
      method: "POST",
      url,
      body,
      headers: {
        "Content-Type": opts.json ? "application/json" : "application/x-www-form-urlencoded",
        ...(await f.sign(account, url, opts.json ? [] : params)),
      },
    };
  }

  return {
    name: f.name,
    outcomes: ["answered", "busy", "no_answer", "voicemail", "failed", "declined", "canceled", "timeout"],

    async createAccount(id) {
      return { id, provider: f.name, credentials: { auth_id: `MA${randomHex(9).toUpperCase()}`, auth_token: randomHex(20) }, secret: {}, applications: [] };
    },

    async handle(state, req, path, body) {
      const acct = new RegExp(`^${f.accountPrefix.replace(/\//g, "\\/")}\\/([^/]+)\\/$`).exec(path);
      if (acct) {
        // Get the account details (a read-only credentials check).
        const account = find(state, acct[1]);
        if (!account || !f.authenticate(req, acct[1], account)) return err(401, "Authentication failed: invalid auth id or token");
        if (req.method !== "GET") return err(405, "Method not allowed");
        return json(200, { auth_id: acct[1], account_type: "standard", cash_credits: "10.00000" });
      }
      const keys = new RegExp(`^${f.accountPrefix.replace(/\//g, "\\/")}\\/([^/]+)\\/Call\\/([^/]+)\\/DTMF\\/$`).exec(path);
      if (keys) return sendDigits(state, req, path, body, find(state, keys[1]), keys[2], (a) => f.authenticate(req, keys[1], a));
      const m = new RegExp(`^${f.accountPrefix.replace(/\//g, "\\/")}\\/([^/]+)\\/(Call|Request|Application)\\/(?:([^/]+)\\/)?$`).exec(path);
      if (!m) return null;
      const [, authId, resource, id] = m;
      const account = find(state, authId);
      if (!account || !f.authenticate(req, authId, account)) return err(401, "Authentication failed: invalid auth id or token");
      state.record(account.id, { method: req.method, path, query: {}, headers: Object.fromEntries(req.headers), body, at: Date.now() });

      if (resource === "Application") return application(state, account, req, id, body);

      if (req.method === "DELETE" && id) {
        const call = [...state.calls.values()].find(
          (c) => c.accountId === account.id && (resource === "Call" ? c.extra.callUuid === id && c.extra.callUuidSent : c.requestId === id),
        );
        if (!call || call.state === "ended") return err(404, "call not found or already ended");
        const fault = state.takeFault(account.id, "hangup");
        if (fault) return err(fault.status, String(fault.body ?? "hang-up failed"));
        const answered = call.state === "answered";
        call.state = "ended";
        call.extra.apiHangup = true;
        call.pending.push(
          await callback(
            account,
            call.urls.hangup_url ?? call.urls.answer_url,
            hangupFields(
              call,
              answered ? "completed" : "cancel",
              answered
                ? { HangupCauseCode: "4000", HangupCauseName: "Normal Hangup", Duration: "3", HangupSource: "API Request" }
                : { HangupCauseCode: "1000", HangupCauseName: "Cancelled by API", HangupSource: "API Request" },
            ),
            "status",
            {},
          ),
        );
        return new Response(null, { status: 204 });
      }
      if (req.method === "POST" && resource === "Call" && id)
        return transferCall(state, account, id, body, {
          common,
          callback: async (a, url, fields, kind, method) => {
            if (method === "POST") return callback(a, url, fields, kind, {});
            const u = new URL(url);
            for (const [k, v] of Object.entries(fields)) u.searchParams.set(k, v);
            return { kind, method: "GET", url: u.toString(), body: "", headers: await f.sign(a, u.toString(), []) };
          },
        });
      if (req.method !== "POST" || resource !== "Call" || id) return err(405, "method not allowed");
      if (!(req.headers.get("content-type") ?? "").includes("application/json")) return err(400, "content type must be application/json");
      const fault = state.takeFault(account.id, "originate");
      if (fault) return err(fault.status, String(fault.body ?? "internal server error"));
      let p: Record<string, unknown>;
      try {
        p = JSON.parse(body);
      } catch {
        return err(400, "invalid JSON body");
      }
      for (const k of ["from", "to", "answer_url"]) if (typeof p[k] !== "string" || !p[k]) return err(400, `${k} parameter is required`);
      const to = String(p.to);
      const from = String(p.from);
      if (to.includes("<") || !f.digitsTo.test(to)) return err(400, `invalid destination number ${to}`);
      if (!DIGITS.test(from)) return err(400, `invalid from number ${from}`);
      for (const k of ["answer_method", "ring_method", "hangup_method"])
        if (p[k] !== undefined && p[k] !== "GET" && p[k] !== "POST") return err(400, `${k} must be GET or POST`);
      for (const k of ["answer_url", "ring_url", "hangup_url"])
        if (p[k] !== undefined && !/^https?:\/\//.test(String(p[k]))) return err(400, `${k} must be an http(s) URL`);
      const requestId = uuid();
      const callUuid = uuid();
      const call: SimCall = {
        id: callUuid,
        provider: f.name,
        accountId: account.id,
        to,
        from,
        answerUrl: String(p.answer_url),
        statusUrl: p.hangup_url ? String(p.hangup_url) : String(p.answer_url),
        urls: {
          answer_url: String(p.answer_url),
          ring_url: p.ring_url ? String(p.ring_url) : "",
          hangup_url: p.hangup_url ? String(p.hangup_url) : String(p.answer_url),
        },
        requestId,
        amd: p.machine_detection !== undefined,
        state: "queued",
        pending: [],
        extra: { callUuid, callUuidSent: false },
        createdAt: Date.now(),
      };
      state.calls.set(callUuid, call);
      state.calls.set(requestId, call);
      return json(201, { api_id: uuid(), message: f.name === "vobiz" ? "Call fired" : "call fired", request_uuid: requestId });
    },

    async redeliver(state, call, cb) {
      const account = state.accounts.get(call.accountId)!;
      const json = (cb.headers["Content-Type"] ?? "").includes("application/json");
      const params = json ? [] : [...new URLSearchParams(cb.body).entries()];
      return { ...cb, headers: { "Content-Type": cb.headers["Content-Type"], ...(await f.sign(account, cb.url, params)) } };
    },

    // keepCallAlive: the elements after <Stream> run once it disconnects. A Redirect requests the next XML (signed as
    // every callback, Event=Redirect); a document that has run out ends the call (4010, end of XML instructions).
    async mediaEnded(state, call, document) {
      if (call.extra.apiHangup) return [];
      const account = state.accounts.get(call.accountId)!;
      const next = afterStream(document, "Stream");
      if (next.kind === "redirect") {
        const fields = { ...common(call), CallStatus: "in-progress", Event: "Redirect" };
        if (next.method === "POST") return [await callback(account, next.url, fields, "answer", {})];
        const url = redirectRequest(next, fields).url;
        return [{ kind: "answer", method: "GET", url, body: "", headers: await f.sign(account, url, []) }];
      }
      call.state = "ended";
      const fields = hangupFields(call, "completed", {
        HangupCauseCode: "4010",
        HangupCauseName: "End Of XML Instructions",
        Duration: "7",
        HangupSource: "Answer XML",
      });
      return [await callback(account, call.urls.hangup_url, fields, "status", {})];
    },

    async script(state, call, outcome, opts) {
      const account = state.accounts.get(call.accountId)!;
      call.extra.callUuidSent = true;
      const out: Callback[] = [];
      const ring = async () => {
        if (call.urls.ring_url)
          out.push(await callback(account, call.urls.ring_url, { ...common(call), CallStatus: "ringing", Event: "Ring" }, "status", opts));
      };
      const answer = async (machine: boolean) => {
        call.state = "answered";
        out.push(
          await callback(
            account,
            call.urls.answer_url,
            { ...common(call), CallStatus: "in-progress", Event: "StartApp", ...(machine ? { Machine: "true" } : {}) },
            "answer",
            opts,
          ),
        );
      };
      const hangup = async (status: string, extra: Record<string, string>) => {
        call.state = "ended";
        out.push(await callback(account, call.urls.hangup_url, hangupFields(call, status, extra), "status", opts));
      };
      switch (outcome) {
        case "answered":
        case "voicemail": {
          // A machine's call is the same normal hangup, with Machine on the answer and on the hangup.
          const machine = outcome === "voicemail";
          await ring();
          await answer(machine);
          await hangup("completed", {
            HangupCauseCode: "4000",
            HangupCauseName: "Normal Hangup",
            Duration: "7",
            BillDuration: "60",
            HangupSource: "Call recipient",
            ...(machine ? { Machine: "true" } : {}),
          });
          break;
        }
        default: {
          const final = UNANSWERED[outcome];
          if (!final) return [];
          if (final.rang) await ring();
          await hangup(final.status, { HangupCauseCode: final.code, HangupCauseName: final.name, HangupSource: final.source });
        }
      }
      return out;
    },
  };

  async function application(state: SimState, account: Account, req: Request, id: string | undefined, body: string): Promise<Response> {
    if (req.method === "GET" && !id) {
      const name = new URL(req.url).searchParams.get("app_name");
      const objects = account.applications.filter((a) => !name || a.name === name).map((a) => ({ app_id: a.id, app_name: a.name, answer_url: a.url }));
      return json(200, { api_id: uuid(), meta: { limit: 20, offset: 0, total_count: objects.length }, objects });
    }
    if (req.method === "POST" && id) {
      // Update an application (its answer and hangup URLs: where the numbers linked to it send their calls).
      const app = account.applications.find((a) => a.id === id);
      if (!app) return err(404, "application not found");
      const p = (() => {
        try {
          return JSON.parse(body) as Record<string, unknown>;
        } catch {
          return null;
        }
      })();
      if (!p) return err(400, "invalid JSON body");
      if (p.answer_url !== undefined && (typeof p.answer_url !== "string" || !/^https?:\/\//.test(p.answer_url)))
        return err(400, "answer_url is not a valid URL");
      if (typeof p.answer_url === "string") app.url = p.answer_url;
      return json(202, { api_id: uuid(), message: "changed" });
    }
    if (req.method !== "POST" || id) return err(405, "method not allowed");
    const fault = state.takeFault(account.id, "provision");
    if (fault) return err(fault.status, String(fault.body ?? "internal server error"));
    let p: Record<string, unknown> = {};
    try {
      p = JSON.parse(body);
    } catch {
      return err(400, "invalid JSON body");
    }
    if (typeof p.app_name !== "string" || !p.app_name) return err(400, "app_name parameter is required");
    if (typeof p.answer_url !== "string" || !/^https?:\/\//.test(p.answer_url)) return err(400, "answer_url parameter is required");
    if (account.applications.some((a) => a.name === p.app_name)) return err(400, "an application with this name already exists");
    const app = { id: String(Date.now()) + randomHex(2), name: p.app_name, url: p.answer_url };
    account.applications.push(app);
    return json(201, { api_id: uuid(), app_id: app.id, message: "created" });
  }
}

function common(call: SimCall): Record<string, string> {
  return { CallUUID: String(call.extra.callUuid), RequestUUID: call.requestId ?? "", From: call.from, To: call.to, Direction: "outbound" };
}

function hangupFields(call: SimCall, status: string, extra: Record<string, string>): Record<string, string> {
  return { ...common(call), CallStatus: status, Event: "Hangup", Duration: "0", BillDuration: "0", HangupCause: extra.HangupCauseName ?? "", ...extra };
}
