// bench/scale: what one call costs at Cloudflare's metered boundaries, counted where the Worker meets them in this
// isolate (the Worker's fetch handler, its queue consumer and every Durable Object of the test pool run in it).
// D1 is counted by test/campaigns/rows-written.ts (statements, rows read and written, the database's size); this adds
// R2 operations and bytes, Queue messages, Durable Object requests per namespace (each RPC call or fetch on a stub) and
// the Worker's own outgoing fetches (subrequests), by patching the bindings' prototypes once.
import { env } from "cloudflare:workers";
import { countD1Writes, d1Tally } from "../../test/campaigns/rows-written";
import { CallSession } from "../../src/calls/call-session";
import { CampaignObject } from "../../src/campaigns/campaign-object";
import { EngineCapacityObject } from "../../src/capacity/engine-capacity-object";
import { OrganizationObject } from "../../src/organizations/organization-object";

export type Meters = {
  d1: { statements: number; writeStatements: number; rowsWritten: number; rowsRead: number; sizeAfter: number };
  r2: { classA: number; classB: number; bytesPut: number; ops: Record<string, number> };
  queue: { messages: number };
  durableObjects: Record<string, number>;
  /** Alarm invocations per class: each is a Durable Object request too. */
  alarms: Record<string, number>;
  fetches: Record<string, number>;
};

const counts = {
  r2: { classA: 0, classB: 0, bytesPut: 0, ops: {} as Record<string, number> },
  queue: { messages: 0 },
  durableObjects: {} as Record<string, number>,
  alarms: {} as Record<string, number>,
  fetches: {} as Record<string, number>,
};

// R2's operation classes (developers.cloudflare.com/r2/pricing): writes and lists are class A, reads class B; deletes free.
const R2_CLASS: Record<string, "A" | "B" | null> = { put: "A", list: "A", createMultipartUpload: "A", get: "B", head: "B", delete: null };
// A multipart upload's own operations (the recording's parts and its completion) are class A too.
const UPLOAD_CLASS: Record<string, "A" | null> = { uploadPart: "A", complete: "A", abort: null };

const sizeOf = (v: unknown): number => {
  if (typeof v === "string") return new TextEncoder().encode(v).length;
  if (v instanceof ArrayBuffer) return v.byteLength;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (v instanceof Blob) return v.size;
  return 0; // a stream: its bytes are counted from the bucket's listing instead
};

function patchMethod(proto: Record<string, unknown>, name: string, before: (args: unknown[]) => void) {
  const real = proto[name] as ((...a: unknown[]) => unknown) | undefined;
  if (typeof real !== "function") throw new Error(`bench/scale: the binding has no ${name} to count`);
  proto[name] = function (this: unknown, ...args: unknown[]) {
    before(args);
    return Reflect.apply(real, this, args);
  };
}

/** A stub whose every method call (RPC or fetch) is counted as one request to its namespace. */
function countingStub<T extends object>(stub: T, ns: string): T {
  return new Proxy(stub, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function" || typeof prop === "symbol" || prop === "then") return v;
      return (...args: unknown[]) => {
        counts.durableObjects[ns] = (counts.durableObjects[ns] ?? 0) + 1;
        // Reflect.apply: on an RPC stub, `.apply` would itself be read as a remote method.
        return Reflect.apply(v as (...a: unknown[]) => unknown, target, args);
      };
    },
  });
}

let installed = false;

export function installMeters(): void {
  if (installed) return;
  installed = true;
  countD1Writes(env.DB);
  const r2 = Object.getPrototypeOf(env.UPLOADS) as Record<string, unknown>;
  for (const [op, cls] of Object.entries(R2_CLASS)) {
    patchMethod(r2, op, (args) => {
      counts.r2.ops[op] = (counts.r2.ops[op] ?? 0) + 1;
      if (cls === "A") counts.r2.classA++;
      if (cls === "B") counts.r2.classB++;
      if (op === "put") counts.r2.bytesPut += sizeOf(args[1]);
    });
  }
  // The upload objects' prototype is only reachable from one: patched the first time an upload is made or resumed.
  let uploads = false;
  const patchUploads = (upload: object) => {
    if (uploads) return;
    uploads = true;
    const proto = Object.getPrototypeOf(upload) as Record<string, unknown>;
    for (const [op, cls] of Object.entries(UPLOAD_CLASS))
      patchMethod(proto, op, (args) => {
        counts.r2.ops[op] = (counts.r2.ops[op] ?? 0) + 1;
        if (cls === "A") counts.r2.classA++;
        if (op === "uploadPart") counts.r2.bytesPut += sizeOf(args[1]);
      });
  };
  const resume = r2.resumeMultipartUpload as (...a: unknown[]) => object;
  r2.resumeMultipartUpload = function (this: unknown, ...args: unknown[]) {
    const upload = Reflect.apply(resume, this, args);
    patchUploads(upload);
    return upload;
  };
  const create = r2.createMultipartUpload as (...a: unknown[]) => Promise<object>;
  r2.createMultipartUpload = async function (this: unknown, ...args: unknown[]) {
    const upload = await Reflect.apply(create, this, args);
    patchUploads(upload);
    return upload;
  };
  const queue = Object.getPrototypeOf(env.WEBHOOKS) as Record<string, unknown>;
  patchMethod(queue, "send", () => counts.queue.messages++);
  patchMethod(queue, "sendBatch", (args) => (counts.queue.messages += (args[0] as unknown[]).length));
  const namespaces = { CAMPAIGN: env.CAMPAIGN, ORGANIZATION: env.ORGANIZATION, CALL_SESSION: env.CALL_SESSION, ENGINE_CAPACITY: env.ENGINE_CAPACITY };
  // All namespaces share one prototype: the binding a stub came from is told by the namespace object itself.
  const names = new Map<object, string>(Object.entries(namespaces).map(([k, v]) => [v as object, k]));
  const nsProto = Object.getPrototypeOf(env.CALL_SESSION) as Record<string, unknown>;
  for (const method of ["get", "getByName"]) {
    const real = nsProto[method] as ((...a: unknown[]) => object) | undefined;
    if (typeof real !== "function") continue;
    nsProto[method] = function (this: object, ...args: unknown[]) {
      return countingStub(Reflect.apply(real, this, args), names.get(this) ?? "other");
    };
  }
  for (const [name, cls] of Object.entries({ CallSession, CampaignObject, OrganizationObject, EngineCapacityObject })) {
    const proto = cls.prototype as unknown as Record<string, unknown>;
    if (typeof proto.alarm === "function") patchMethod(proto, "alarm", () => (counts.alarms[name] = (counts.alarms[name] ?? 0) + 1));
  }
  const realFetch = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    counts.fetches[url.host] = (counts.fetches[url.host] ?? 0) + 1;
    return realFetch(input, init);
  }) as typeof fetch;
}

/** The meters' current readings (copies). */
export function readMeters(): Meters {
  return structuredClone({
    d1: {
      statements: d1Tally.statements,
      writeStatements: d1Tally.writeStatements,
      rowsWritten: d1Tally.rowsWritten,
      rowsRead: d1Tally.rowsRead,
      sizeAfter: d1Tally.sizeAfter,
    },
    r2: counts.r2,
    queue: counts.queue,
    durableObjects: counts.durableObjects,
    alarms: counts.alarms,
    fetches: counts.fetches,
  });
}
