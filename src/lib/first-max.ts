/** The index of the first largest value (0 for an empty array): where a series peaks. */
export function firstMaxIndex(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
