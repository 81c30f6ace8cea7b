// Growable columns of typed arrays, for the logs that a replay or an import fills row by row (trace
// columns, request streams, event logs): one typed array per field instead of one object per row.
// A spec names each column's array type; every column grows together, by doubling.

type ColumnType = Uint8ArrayConstructor | Int32ArrayConstructor | Float64ArrayConstructor;
type Column = Uint8Array | Int32Array | Float64Array;
export type ColumnSpec = Readonly<Record<string, ColumnType>>;
export type ColumnsOf<S extends ColumnSpec> = { -readonly [K in keyof S]: InstanceType<S[K]> };

/** A zeroed column of `rows` rows; `shared`: in a SharedArrayBuffer (posted to another thread, it is
 * shared, not copied). */
function column(type: ColumnType, rows: number, shared: boolean): Column {
  return shared ? new (type as new (buffer: ArrayBufferLike) => Column)(new SharedArrayBuffer(rows * type.BYTES_PER_ELEMENT)) : new type(rows);
}

/** Columns of `rows` rows, zeroed. */
export function makeColumns<S extends ColumnSpec>(spec: S, rows: number, shared = false): ColumnsOf<S> {
  const out: Record<string, Column> = {};
  for (const key of Object.keys(spec)) out[key] = column(spec[key]!, rows, shared);
  return out as ColumnsOf<S>;
}

/** Replaces each column of `target` with a copy `rows` long (at least its length). */
export function growColumns<S extends ColumnSpec>(target: { [K in keyof S]: Column }, spec: S, rows: number, shared = false): void {
  const t = target as Record<string, Column>;
  for (const key of Object.keys(spec)) {
    const grown = column(spec[key]!, rows, shared);
    grown.set(t[key]!);
    t[key] = grown;
  }
}

/** Each column of `columns` copied into shared memory. */
export function sharedColumns<S extends ColumnSpec>(columns: { readonly [K in keyof S]: Column }, spec: S): ColumnsOf<S> {
  const c = columns as Record<string, Column>;
  const out = makeColumns(spec, c[Object.keys(spec)[0]!]!.length, true);
  for (const key of Object.keys(spec)) (out as Record<string, Column>)[key]!.set(c[key]!);
  return out;
}

/** The first `rows` rows of each column: views when little would be trimmed (a copy of a million
 * rows costs more than the slack), else copies that free the rest. Shared columns are always views:
 * posting them copies nothing, and memory never written is never paged in. */
export function trimColumns<S extends ColumnSpec>(columns: ColumnsOf<S>, spec: S, rows: number, shared = false): ColumnsOf<S> {
  const c = columns as Record<string, Column>;
  const out: Record<string, Column> = {};
  for (const key of Object.keys(spec)) {
    const a = c[key]!;
    out[key] = shared || rows * 4 >= a.length * 3 ? a.subarray(0, rows) : a.slice(0, rows);
  }
  return out as ColumnsOf<S>;
}
