/** An address as PyTorch's snapshots and memory_viz print one: 0x7f3a00000000. */
export const hex = (n: number): string => `0x${n.toString(16)}`;
