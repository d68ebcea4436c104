// The carrier simulator's requests out never look up a `.test` name (reach.ts): the test pool's Worker is
// `edgedial.test`, and a lookup on a machine whose resolver does not answer waited 10 s per request.
import { afterEach, describe, expect, it, vi } from "vitest";
import { reach } from "../../src/dev/simulator/reach";

afterEach(() => vi.unstubAllGlobals());

describe("the simulator's requests out", () => {
  it("refuses a .test host at once, as a refused connection, without fetching", async () => {
    const fetched = vi.fn(async () => new Response("reached"));
    vi.stubGlobal("fetch", fetched);
    await expect(reach("http://edgedial.test/api/v1/telephony/sandbox/inbound/1/x", { method: "POST" })).rejects.toThrow("connect ECONNREFUSED edgedial.test");
    await expect(reach(new Request("ws://hooks.example.test/stream"))).rejects.toThrow("connect ECONNREFUSED hooks.example.test");
    // Its own host too: the entry Worker serves sim.test's carrier paths, and a fetch of it would only look it up.
    await expect(reach("http://sim.test/unknown")).rejects.toThrow("connect ECONNREFUSED sim.test");
    expect(fetched).not.toHaveBeenCalled();
  });

  it("fetches loopback and every other host", async () => {
    const fetched = vi.fn(async () => new Response("reached"));
    vi.stubGlobal("fetch", fetched);
    for (const url of ["http://localhost:8787/health", "http://127.0.0.1:8787/health", "https://api.twilio.com/2010-04-01", "http://testing.example.com/"]) {
      expect(await (await reach(url)).text()).toBe("reached");
    }
    expect(fetched).toHaveBeenCalledTimes(4);
  });
});
