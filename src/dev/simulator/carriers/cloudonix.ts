// Cloudonix: Bearer JSON originate naming exactly one of cxml/url/application, session
// updates and a CDR posted to the call's `callback`, voice-application requests to `url`. Nothing is signed.
import { afterStream, redirectRequest } from "./after-stream";
import { DIGITS, json, randomHex, type Account, type Callback, type Carrier, type Outcome, type SimCall, type SimState } from "../types";

const err = (status: number, message: string) => json(status, { status, message });

function bearer(state: SimState, req: Request, domain: string): Account | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.get("authorization") ?? "");
  return m
    ? [...state.accounts.values()].find((a) => a.provider === "cloudonix" && a.credentials.bearer_token === m[1] && a.credentials.domain_id === domain)
    : undefined;
}

const post = (url: string, body: unknown, kind: Callback["kind"] = "status"): Callback => ({
  kind,
  method: "POST",
  url,
  body: JSON.stringify(body),
  headers: { "Content-Type": "application/json" },
});

/** Both POSTs (create application, originate) start alike: a scripted fault first, then the JSON body or a 400. */
function faultOrJson(state: SimState, accountId: string, op: "provision" | "originate", body: string): Response | { p: any } {
  const fault = state.takeFault(accountId, op);
  if (fault) return err(fault.status, String(fault.body ?? "Internal error"));
  try {
    return { p: JSON.parse(body) };
  } catch {
    return err(400, "Invalid JSON");
  }
}

function session(call: SimCall, status: string, answerTime = 0, endTime = 0) {
  return {
    token: call.id,
    domain: call.extra.domain,
    callerId: call.from,
    destination: call.to,
    direction: "outgoing",
    status,
    callStartTime: call.createdAt,
    callAnswerTime: answerTime,
    callEndTime: endTime,
  };
}

/** The calls nobody answered: the disposition of Cloudonix's CDR. */
const UNANSWERED: Partial<Record<Outcome, string>> = { busy: "BUSY", no_answer: "NOANSWER", failed: "FAILED", canceled: "CANCEL" };

export const cloudonix: Carrier = {
  name: "cloudonix",
  outcomes: ["answered", "busy", "no_answer", "failed", "canceled"],

  async createAccount(id) {
    return {
      id,
      provider: "cloudonix",
      credentials: { bearer_token: `XI${randomHex(16).toUpperCase()}`, domain_id: `sim-${randomHex(4)}.cloudonix.net` },
      secret: {},
      applications: [],
    };
  },

  async handle(state, req, path, body) {
    const originate = /^\/calls\/([^/]+)\/application$/.exec(path);
    const app = /^\/customers\/self\/domains\/([^/]+)\/applications(?:\/([^/]+))?$/.exec(path);
    const sess = /^\/customers\/self\/domains\/([^/]+)\/sessions\/([^/]+)$/.exec(path);
    const dom = /^\/customers\/self\/domains\/([^/]+)$/.exec(path);
    const domain = decodeURIComponent((originate ?? app ?? sess ?? dom)?.[1] ?? "");
    if (!originate && !app && !sess && !dom) return null;
    const account = bearer(state, req, domain);
    if (!account) return err(401, "Unauthorized");
    state.record(account.id, { method: req.method, path, query: {}, headers: Object.fromEntries(req.headers), body, at: Date.now() });
    // Get the domain (a read-only credentials check).
    if (dom) return req.method === "GET" ? json(200, { domain, active: true }) : err(405, "Method not allowed");

    if (sess) {
      if (req.method !== "DELETE") return err(405, "Method not allowed");
      const call = state.calls.get(decodeURIComponent(sess[2]));
      if (!call || call.accountId !== account.id || call.state === "ended") return err(404, "Session not found");
      const answered = call.state === "answered";
      call.state = "ended";
      call.extra.apiHangup = true;
      call.pending.push(
        post(call.statusUrl!, {
          domain,
          session: { token: call.id },
          disposition: answered ? "ANSWER" : "CANCEL",
          billsec: answered ? 3 : 0,
          duration: 5,
          from: call.from,
          to: call.to,
        }),
      );
      return new Response(null, { status: 204 });
    }

    if (app) {
      const name = app[2] ? decodeURIComponent(app[2]) : null;
      if (req.method === "GET" && name) {
        const found = account.applications.find((a) => a.name === name);
        return found ? json(200, { id: Number(found.id), name: found.name, url: found.url, type: "cxml", active: true }) : err(404, "Application not found");
      }
      if (req.method === "PATCH" && name) {
        // The application's URL updated (what attaching an inbound agent does).
        const found = account.applications.find((a) => a.name === name);
        if (!found) return err(404, "Application not found");
        let p: any;
        try {
          p = JSON.parse(body);
        } catch {
          return err(400, "Invalid JSON");
        }
        if (p.url !== undefined && !/^https?:\/\//.test(String(p.url))) return err(400, "url must be a URL");
        if (typeof p.url === "string") found.url = p.url;
        return json(200, { id: Number(found.id), name: found.name, url: found.url, type: "cxml", active: true });
      }
      if (req.method !== "POST" || name) return err(405, "Method not allowed");
      const parsed = faultOrJson(state, account.id, "provision", body);
      if (parsed instanceof Response) return parsed;
      const p = parsed.p;
      if (typeof p.name !== "string" || !p.name) return err(400, "name is required");
      if (typeof p.url !== "string" || !/^https?:\/\//.test(p.url)) return err(400, "url is required");
      if (account.applications.some((a) => a.name === p.name)) return err(409, "Application already exists");
      const created = { id: String(account.applications.length + 1), name: p.name, url: p.url };
      account.applications.push(created);
      return json(200, { id: Number(created.id), name: created.name, url: created.url, type: p.type ?? "cxml", active: true });
    }

    if (req.method !== "POST") return err(405, "Method not allowed");
    const parsed = faultOrJson(state, account.id, "originate", body);
    if (parsed instanceof Response) return parsed;
    const p = parsed.p;
    if (typeof p.destination !== "string" || !DIGITS.test(p.destination)) return err(400, `Invalid destination '${p.destination}'`);
    if (p["caller-id"] !== undefined && !DIGITS.test(String(p["caller-id"]))) return err(400, `Invalid caller-id '${p["caller-id"]}'`);
    const modes = ["cxml", "url", "application"].filter((k) => p[k] !== undefined);
    if (modes.length !== 1) return err(400, "Exactly one of cxml, url or application is required");
    if (p.url !== undefined && !/^https?:\/\//.test(p.url)) return err(400, "url must be an http(s) URL");
    const token = randomHex(16);
    const call: SimCall = {
      id: token,
      provider: "cloudonix",
      accountId: account.id,
      to: p.destination,
      from: String(p["caller-id"] ?? ""),
      answerUrl: p.url,
      statusUrl: p.callback,
      urls: {},
      amd: false,
      state: "queued",
      pending: [],
      extra: { domain, cxml: p.cxml },
      createdAt: Date.now(),
    };
    state.calls.set(token, call);
    return json(200, { domainId: 1, subscriberId: null, destination: p.destination, direction: "outbound-api", token });
  },

  // <Connect> blocks until its connection ends; the CXML after it then runs: a Redirect requests the next document
  // (a voice-application request, JSON for POST, unsigned), and a document that has run out ends the session.
  async mediaEnded(_state, call, document) {
    if (call.extra.apiHangup) return [];
    const next = afterStream(document, "Connect");
    const fields = { CallSid: randomHex(16), From: call.from, To: call.to, Direction: "outbound-api", CallStatus: "in-progress", Session: call.id };
    if (next.kind === "redirect") {
      if (next.method === "POST") return [post(next.url, fields, "answer")];
      return [{ kind: "answer", method: "GET", url: redirectRequest(next, fields).url, body: "", headers: {} }];
    }
    call.state = "ended";
    if (!call.statusUrl) return [];
    return [
      post(call.statusUrl, {
        domain: call.extra.domain,
        session: { token: call.id },
        disposition: "ANSWER",
        billsec: 7,
        duration: 12,
        from: call.from,
        to: call.to,
      }),
    ];
  },

  async script(_state, call, outcome) {
    if (!call.statusUrl) return [];
    const out: Callback[] = [post(call.statusUrl, session(call, "processing"))];
    const cdr = (disposition: string, billsec = 0) => {
      call.state = "ended";
      out.push(
        post(call.statusUrl!, {
          domain: call.extra.domain,
          session: { token: call.id },
          disposition,
          billsec,
          duration: billsec + 5,
          from: call.from,
          to: call.to,
        }),
      );
    };
    switch (outcome) {
      case "answered": {
        out.push(post(call.statusUrl, session(call, "ringing")));
        call.state = "answered";
        const answeredAt = Date.now() - 7000;
        if (call.answerUrl)
          out.push(
            post(
              call.answerUrl,
              { CallSid: randomHex(16), From: call.from, To: call.to, Direction: "outbound-api", CallStatus: "in-progress", Session: call.id },
              "answer",
            ),
          );
        out.push(post(call.statusUrl, session(call, "connected", answeredAt)));
        cdr("ANSWER", 7);
        break;
      }
      default: {
        const disposition = UNANSWERED[outcome];
        if (!disposition) return [];
        // A failed call never rang.
        if (outcome !== "failed") out.push(post(call.statusUrl, session(call, "ringing")));
        cdr(disposition);
      }
    }
    return out;
  },
};
