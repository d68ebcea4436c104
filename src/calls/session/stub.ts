// The call session of a run: one Durable Object per run, named by its id.
export function callSessionStub(env: Env, runId: number) {
  return env.CALL_SESSION.get(env.CALL_SESSION.idFromName(`run:${runId}`));
}
