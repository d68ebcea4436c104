// The carrier simulator's requests out never look up a `.test` name (reach.ts): the test pool's Worker is
// `edgedial.test`, and a lookup on a machine whose resolver does not answer waited 10 s per request.
import { afterEach, describe, expect, it, vi } from "vitest";
import { reach } from "../../src/dev/simulator/reach";

afterEach(() => vi.unstubAllGlobals());

describe("the simulator's requests out", () => {
  it("refuses a .test host it does not own at once, as a refused connection, without fetching", async () => {
    const fetched = vi.fn(async () => new Response("reached"));
    vi.stubGlobal("fetch", fetched);
    await expect(reach("http://edgedial.test/api/v1/telephony/sandbox/inbound/1/x", { method: "POST" })).rejects.toThrow("connect ECONNREFUSED edgedial.test");
    await expect(reach(new Request("ws://hooks.example.test/stream"))).rejects.toThrow("connect ECONNREFUSED hooks.example.test");
    expect(fetched).not.toHaveBeenCalled();
  });

  it("fetches its own .test host, loopback and every other host", async () => {
    const fetched = vi.fn(async () => new Response("reached"));
    vi.stubGlobal("fetch", fetched);
    for (const url of ["http://sim.test/_sim/x", "http://127.0.0.1:8787/health", "https://api.twilio.com/2010-04-01", "http://testing.example.com/"]) {
      expect(await (await reach(url, undefined, ["sim.test", "localhost", "127.0.0.1"])).text()).toBe("reached");
    }
    expect(fetched).toHaveBeenCalledTimes(4);
  });
});
