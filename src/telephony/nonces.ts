// Replay protection for carrier callbacks: the nonce (or once-only id) of a verified
// signature is claimed once per configuration and scheme, and kept until the signature would be refused
// anyway. Stored in D1 (`callback_nonces`): callbacks are plain Worker requests that already read D1, the
// primary key makes insert-or-fail atomic across concurrent deliveries, and expired rows go with one indexed
// delete, without routing every callback through the organization's object (which hands out call leases).
import { and, eq, lt } from "drizzle-orm";
import { callbackNonces } from "../db/schema";
import { clock } from "../lib/clock";
import { getDb } from "../lib/db";
import type { ReplayKey } from "./providers/types";

/**
 * Claims `key` for configuration `configId`: true the first time, false when it was already seen inside its
 * window (a replay). Expired rows of every configuration are pruned on the way.
 */
export async function claimNonce(env: { DB: D1Database }, configId: number, key: ReplayKey): Promise<boolean> {
  const db = getDb(env);
  const now = clock.now();
  await db.delete(callbackNonces).where(lt(callbackNonces.expiresAt, now));
  const claimed = await db
    .insert(callbackNonces)
    .values({ configId, scheme: key.scheme, nonce: key.nonce, expiresAt: Math.max(key.expiresAtMs, now) })
    .onConflictDoNothing()
    .returning()
    .get();
  return claimed !== undefined && claimed !== null;
}

/** Gives a claimed nonce back when the callback could not be processed, so the carrier's retry of it is accepted. */
export async function releaseNonce(env: { DB: D1Database }, configId: number, key: ReplayKey): Promise<void> {
  await getDb(env)
    .delete(callbackNonces)
    .where(and(eq(callbackNonces.configId, configId), eq(callbackNonces.scheme, key.scheme), eq(callbackNonces.nonce, key.nonce)));
}
