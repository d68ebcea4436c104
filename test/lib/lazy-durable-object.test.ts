// A Durable Object class whose module loads with its first object (src/lib/lazy-durable-object.ts), on a real
// object's state in workerd (any object serves as the host). The first object, made before the module is loaded,
// holds its events until the real object is made inside its blockConcurrencyWhile (whose own blockConcurrencyWhile
// nests there) and forwards every method to it; once loaded, the class makes the real class's objects.
import { runInDurableObject } from "cloudflare:test";
import { DurableObject, env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CampaignObject } from "../../src/campaigns/campaign-object";
import { CallSession } from "../../src/calls/call-session";
import { lazyDurableObject, methodsOf } from "../../src/lib/lazy-durable-object";
import { AriEventsObject } from "../../src/calls/ari/ari-events";
import { EngineCapacityObject } from "../../src/capacity/engine-capacity-object";
import { OrganizationObject } from "../../src/organizations/organization-object";
import { DURABLE_OBJECT_METHODS } from "../../src/index";

class Base extends DurableObject<Env> {
  greet(name: string) {
    return `hello ${name} from ${this.constructor.name}`;
  }
}
class Real extends Base {
  started = false;
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      await scheduler.wait(5);
      this.started = true;
    });
  }
  async isStarted() {
    return this.started;
  }
  alarms = 0;
  async alarm() {
    this.alarms++;
  }
  async alarmCount() {
    return this.alarms;
  }
}

/** A fresh object to host the test's objects: each call of the returned function is one event delivered to it. */
let n = 0;
function host() {
  const stub = env.ORGANIZATION.get(env.ORGANIZATION.idFromName(`lazy-do-test:${++n}:${Date.now()}`));
  return <T>(fn: (state: DurableObjectState) => T | Promise<T>) => runInDurableObject(stub, (_o, state) => fn(state));
}

describe("a lazily loaded Durable Object class", () => {
  it("the first object forwards every method of the real class's chain once loaded; later objects are real ones", async () => {
    let loads = 0;
    const Lazy = lazyDurableObject(async () => {
      loads++;
      await scheduler.wait(5);
      return Real;
    });
    const event = host();
    const first = await event((state) => {
      const made = new Lazy(state, env);
      expect(made).not.toBeInstanceOf(Real);
      expect(Object.hasOwn(Object.getPrototypeOf(made), "greet")).toBe(false);
      return made;
    });
    // The next event is delivered after the first object's blockConcurrencyWhile: loaded, the real object made, and
    // the real constructor's own blockConcurrencyWhile (nested in it) done.
    await event(async (state) => {
      expect(await first.isStarted()).toBe(true);
      expect(first.greet("a")).toBe("hello a from Real"); // a method of the real class's base, through the first object
      await first.alarm?.(); // the runtime's handler, forwarded like any method
      expect(await first.alarmCount()).toBe(1);
      const second = new Lazy(state, env);
      expect(second).toBeInstanceOf(Real);
      expect(second.greet("b")).toBe("hello b from Real");
    });
    expect(loads).toBe(1);
  });

  it("the event that makes the first object reaches its declared methods and the runtime's handlers at once: each waits for the real object", async () => {
    const Lazy = lazyDurableObject(async () => {
      await scheduler.wait(5);
      return Real;
    }, ["greet", "isStarted"]);
    await host()(async (state) => {
      // The runtime looks the method up right after making the object, before anything is loaded.
      const made = new Lazy(state, env) as unknown as Record<string, (...a: unknown[]) => unknown>;
      expect(typeof made.greet).toBe("function");
      expect(typeof made.fetch).toBe("function");
      expect(await made.greet("a")).toBe("hello a from Real");
      expect(await made.isStarted()).toBe(true);
      await made.alarm();
      expect(await made.alarmCount()).toBe(1);
      await expect(made.fetch(new Request("https://x/"))).rejects.toThrow("no method fetch()");
    });
  });

  it("each deployed class declares every method its first object must forward", () => {
    const real = { CampaignObject, OrganizationObject, AriEventsObject, CallSession, EngineCapacityObject };
    const handlers = ["fetch", "alarm", "webSocketMessage", "webSocketClose", "webSocketError"];
    for (const [name, cls] of Object.entries(real)) {
      const declared: readonly string[] = DURABLE_OBJECT_METHODS[name as keyof typeof DURABLE_OBJECT_METHODS];
      const missing = methodsOf(cls as never).filter((m) => !handlers.includes(m) && !declared.includes(m));
      expect(missing, `add to DURABLE_OBJECT_METHODS.${name} in src/index.ts`).toEqual([]);
    }
  });

  it("a failed load is tried again by the next object", async () => {
    let attempts = 0;
    const Lazy = lazyDurableObject(async () => {
      if (++attempts === 1) throw new Error("first load fails");
      return Real;
    });
    await expect(Lazy.load()).rejects.toThrow("first load fails");
    await expect(Lazy.load()).resolves.toBe(Real);
  });

  it("names the methods of the whole chain, not DurableObject's own or the constructor", () => {
    expect(methodsOf(Real).sort()).toEqual(["alarm", "alarmCount", "greet", "isStarted"]);
    // The deployed classes' handlers are among what the first object forwards.
    expect(methodsOf(CampaignObject)).toContain("alarm");
    expect(methodsOf(CallSession)).toEqual(expect.arrayContaining(["fetch", "alarm"]));
  });
});
