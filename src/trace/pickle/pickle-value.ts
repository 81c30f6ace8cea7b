/** What readPickle returns: Python's plain data as JS values. */
export type PickleValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | PickleValue[]
  | PickleDict;

/** A Python dict. Keys are strings; int keys become their decimal string. */
export interface PickleDict {
  [key: string]: PickleValue;
}
