// The simulator's own requests out: a carrier's callbacks and media socket, a transfer's whisper, and whatever the
// Worker in front of it sends to hosts it does not own.

/**
 * `fetch`, except toward a `.test` host: RFC 6761 reserves that name for testing and no resolver answers it, so such a
 * host is refused at once, as a refused connection is, rather than after a name lookup that a machine without a
 * network waits on for seconds. The test pool names the Worker `edgedial.test`, which nothing here can reach; the
 * simulator's own `sim.test` is served by its entry Worker, never fetched.
 */
export function reach(input: Request | string, init?: RequestInit): Promise<Response> {
  const host = new URL(typeof input === "string" ? input : input.url).hostname;
  if (host.endsWith(".test")) return Promise.reject(new Error(`connect ECONNREFUSED ${host}`));
  return fetch(input, init);
}
