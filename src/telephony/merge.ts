// Dotted-path access and the deep merge behind partial updates (PUT sends only what changed).
import { isObject, type Obj } from "../lib/helpers";

export const splitPath = (path: string): string[] => path.split(".");

export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const key of splitPath(path)) {
    if (!isObject(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** Sets a value at a dotted path; returns false (and changes nothing) when a parent is missing or not an object. */
export function setPath(obj: Obj, path: string, value: unknown): boolean {
  const keys = splitPath(path);
  let cur: unknown = obj;
  for (const key of keys.slice(0, -1)) {
    if (!isObject(cur) || !isObject(cur[key])) return false;
    cur = cur[key];
  }
  (cur as Obj)[keys[keys.length - 1]] = value;
  return true;
}

export function deletePath(obj: Obj, path: string): void {
  const keys = splitPath(path);
  let cur: unknown = obj;
  for (const key of keys.slice(0, -1)) {
    if (!isObject(cur)) return;
    cur = cur[key];
  }
  if (isObject(cur)) delete cur[keys[keys.length - 1]];
}

/** A JSON-safe deep copy (configurations are plain JSON). */
export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/**
 * Merges `patch` into `base` without touching either: objects merge key by key (recursively), everything
 * else (scalars, arrays, null) replaces; a key absent from the patch, or undefined in it, keeps its value.
 * So `{external_pbx: {timeout_seconds: 9}}` changes one nested field and `{external_pbx: null}` removes the object.
 */
export function deepMerge(base: Obj, patch: Obj): Obj {
  const out: Obj = clone(base);
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const current = out[key];
    out[key] = isObject(value) && isObject(current) ? deepMerge(current, value) : clone(value);
  }
  return out;
}
