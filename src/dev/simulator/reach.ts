// The simulator's own requests out: a carrier's callbacks and media socket, a transfer's whisper, and whatever the
// Worker in front of it sends to hosts it does not own.

/**
 * `fetch`, except toward a `.test` host other than the simulator's own: RFC 6761 reserves that name for testing and
 * no resolver answers it, so such a host is refused at once, as a refused connection is, rather than after a name
 * lookup that a machine without a network waits on for seconds (the test pool names the Worker `edgedial.test`,
 * which nothing here can reach).
 */
export function reach(input: Request | string, init?: RequestInit, own: string[] = []): Promise<Response> {
  const host = new URL(typeof input === "string" ? input : input.url).hostname;
  if (host.endsWith(".test") && !own.includes(host)) return Promise.reject(new Error(`connect ECONNREFUSED ${host}`));
  return fetch(input, init);
}
