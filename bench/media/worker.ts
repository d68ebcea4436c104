// bench/media: the edgedial Worker plus one bench-only route that opens a call session straight away (no run, no
// carrier): /bench/session/{n} upgrades to session n with the echo agent on Twilio's media protocol (recorded to
// the local R2 with ?record=1). The session, its codecs, pacer, recorder and socket are the product's own.
import worker from "../../src/index";
import { SESSION_HEADER, type SessionStart } from "../../src/calls/session/call-session";
import { callSessionStub } from "../../src/calls/session/stub";

export * from "../../src/index";

// The production Worker's handlers (its queue consumer, its cron), with the bench's route in front of its fetch.
export default {
  ...worker,
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const m = /^\/bench\/session\/(\d+)$/.exec(url.pathname);
    if (!m) return worker.fetch(request, env, ctx);
    const n = Number(m[1]);
    const stub = callSessionStub(env, n);
    // No silence timeout during the run: a bench client may pause between phases.
    await stub.prepare({ agent: "echo", silenceSeconds: 3600 });
    const start: SessionStart = { runId: n, orgId: 0, provider: "twilio", greeting: null, variables: {}, record: url.searchParams.get("record") === "1" };
    const headers = new Headers(request.headers);
    headers.set(SESSION_HEADER, JSON.stringify(start));
    return stub.fetch(new Request(request.url, { headers }));
  },
} satisfies ExportedHandler<Env>;
