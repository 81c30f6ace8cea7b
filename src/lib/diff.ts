// The longest common subsequence of two sequences, as matched index pairs: diff-sequences (Myers' O(ND)
// diff in linear space, jest's), which is CommonJS: Node's ESM loader hands over its exports object as
// the default import, bundlers its default export.
import diffImport from 'diff-sequences';

type DiffSequences = typeof diffImport;
const diffSequences: DiffSequences = typeof diffImport === 'function' ? diffImport : (diffImport as unknown as { default: DiffSequences }).default;

/**
 * For each index of `a`, the index of `b` it is matched with in a longest common subsequence of the two
 * (by `same`), or -1.
 */
export function commonSubsequence(aLength: number, bLength: number, same: (i: number, j: number) => boolean): Int32Array {
  const match = new Int32Array(aLength).fill(-1);
  diffSequences(aLength, bLength, same, (n, i, j) => {
    for (let k = 0; k < n; k++) match[i + k] = j + k;
  });
  return match;
}
