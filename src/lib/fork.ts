// A deep copy of an object graph that keeps what a plain structuredClone loses: classes (the copies
// share their originals' prototypes, so methods work), identity (an object reached twice is copied
// once) and cycles (a block's prev/next chain). A replay checkpoint is such a copy of the allocator.

/**
 * How to copy instances of one class faster than field by name through a generic loop: a blank made
 * by its constructor, and the fields copied onto it by name (`copy` maps each object field to its
 * copy). Keep `fill` in step with the class's fields: tests/unit/fork.test.ts checks it.
 */
export interface Copier<T extends object = object> {
  blank(): T;
  fill(from: T, to: T, copy: <V>(value: V) => V): void;
}

/**
 * A copier for a class whose blank its own constructor makes (`blank`), every field then copied by
 * name: less to keep in step than a hand-written fill, the same hidden class as the originals.
 */
export function constructedCopier<T extends object>(blank: () => T): Copier<T> {
  return {
    blank,
    fill(from, to, copy) {
      const src = from as Record<string, unknown>;
      const dst = to as Record<string, unknown>;
      for (const key of Object.keys(src)) dst[key] = copy(src[key]);
    },
  };
}

/** Copiers by class prototype. */
export type Copiers = ReadonlyMap<object, Copier>;

/**
 * Copies `root` and all it reaches, except what `shared` holds, functions and frozen objects, which
 * stay as they are (immutable inputs: a request stream, a config). Typed arrays are copied whole.
 * A class with a copier in `copiers` is copied onto a blank of its constructor: its copies then have
 * the hidden class of the objects the constructor makes, so hot code that reads both stays
 * monomorphic (copies made with Object.create ran a replay several times slower), and its fields are
 * copied by name. Works with an explicit stack: linked lists of any length do not exhaust the call stack.
 */
export function fork<T>(root: T, shared: ReadonlySet<object> = new Set(), copiers: Copiers = new Map()): T {
  const copies = new Map<object, object>();
  const todo: [object, object, Copier | undefined][] = [];

  const copy = <V>(value: V): V => {
    if (typeof value !== 'object' || value === null) return value; // primitives and functions
    const done = copies.get(value);
    if (done !== undefined) return done as V;
    if (shared.has(value) || Object.isFrozen(value)) return value;
    let copier: Copier | undefined;
    let out: object;
    if (ArrayBuffer.isView(value)) {
      out = (value as unknown as { slice(): object }).slice();
    } else if (Array.isArray(value)) {
      // slice() keeps the array's elements kind (packed numbers stay packed): the code that reads it
      // stays as fast on the copy. Object elements are replaced by their copies below.
      out = value.slice();
    } else if (value instanceof Map) {
      out = new Map();
    } else if (value instanceof Set) {
      out = new Set();
    } else {
      const proto = Object.getPrototypeOf(value) as object | null;
      copier = proto ? copiers.get(proto) : undefined;
      out = copier ? copier.blank() : (Object.create(proto) as object);
    }
    todo.push([value, out, copier]);
    copies.set(value, out);
    return out as V;
  };

  const result = copy(root) as T;
  while (todo.length > 0) {
    const [from, to, copier] = todo.pop()!;
    if (copier) copier.fill(from, to, copy);
    else if (Array.isArray(from)) {
      const dst = to as unknown[];
      for (let i = 0; i < from.length; i++) {
        const v: unknown = from[i];
        if (typeof v === 'object' && v !== null) dst[i] = copy(v);
      }
    } else if (from instanceof Map) {
      for (const [k, v] of from) (to as Map<unknown, unknown>).set(copy(k), copy(v));
    } else if (from instanceof Set) {
      for (const v of from) (to as Set<unknown>).add(copy(v));
    } else {
      const src = from as Record<string, unknown>;
      const dst = to as Record<string, unknown>;
      for (const key of Object.keys(src)) {
        const v = src[key];
        dst[key] = typeof v === 'object' && v !== null ? copy(v) : v;
      }
    }
  }
  return result;
}
