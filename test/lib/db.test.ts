// getDb keeps one drizzle instance per D1 binding (src/lib/db.ts): reused for the same binding, never another's.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { organizations } from "../../src/db/schema";
import { getDb } from "../../src/lib/db";

describe("getDb", () => {
  it("gives the same instance for the same binding, and another binding's queries reach that binding", async () => {
    expect(getDb({ DB: env.DB })).toBe(getDb(env));
    const seen: string[] = [];
    const other = new Proxy(env.DB, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (prop === "prepare") return (sql: string) => (seen.push(sql), target.prepare(sql));
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    expect(getDb({ DB: other })).not.toBe(getDb(env));
    await getDb({ DB: other }).select({ id: organizations.id }).from(organizations).limit(1).all();
    expect(seen).toHaveLength(1);
    await getDb(env).select({ id: organizations.id }).from(organizations).limit(1).all();
    expect(seen).toHaveLength(1);
  });
});
