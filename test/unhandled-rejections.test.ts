// The setup file test/unhandled-rejections.ts sees a rejection nobody handles, in a Durable Object as in the Worker,
// so its afterEach fails the test that caused it; a rejection handled later is not one. Each case takes what it
// caused (takeUnhandled), so this file itself stays green.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { takeUnhandled } from "./unhandled-rejections";

describe("unhandled rejections during a test", () => {
  it("one in a Durable Object's background work is seen", async () => {
    const stub = env.CAMPAIGN.get(env.CAMPAIGN.idFromName("unhandled-rejections"));
    await runInDurableObject(stub, async () => {
      setTimeout(() => void Promise.reject(new Error("forgotten in the object")), 5);
    });
    await scheduler.wait(100);
    expect(takeUnhandled().map(String)).toEqual(["Error: forgotten in the object"]);
  });

  it("one in the Worker's isolate (a promise nobody awaited) is seen", async () => {
    void (async () => {
      throw new Error("not awaited");
    })();
    await scheduler.wait(20);
    expect(takeUnhandled().map(String)).toEqual(["Error: not awaited"]);
  });

  it("a rejection handled later is not one", async () => {
    const p = Promise.reject(new Error("handled late"));
    await scheduler.wait(20);
    await p.catch(() => {});
    await scheduler.wait(20);
    expect(takeUnhandled()).toEqual([]);
  });
});
