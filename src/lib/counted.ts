/** "1 request", "3 requests": a count with its noun in the number the count takes. */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
