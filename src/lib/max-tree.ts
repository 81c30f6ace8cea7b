// A value per slot in a max segment tree: the highest slot whose value reaches a bound in O(log n),
// where a scan of the slots is O(n) (the driver placement's newest chunk with room for a segment:
// a scan made a replay with 100k segments quadratic).

/** Values of slots 0, 1, 2, ...; an unset slot holds -Infinity. */
export class MaxTree {
  /** Leaves at [capacity, 2 capacity), each node the max of its two children; node 1 is the root. */
  private nodes = new Float64Array(2).fill(-Infinity);
  private capacity = 1;

  set(slot: number, value: number): void {
    while (slot >= this.capacity) this.grow();
    let i = this.capacity + slot;
    this.nodes[i] = value;
    for (i >>= 1; i >= 1; i >>= 1) this.nodes[i] = Math.max(this.nodes[2 * i]!, this.nodes[2 * i + 1]!);
  }

  /** The highest slot whose value is at least `bound`, -1 if none. */
  lastAtLeast(bound: number): number {
    if (!(this.nodes[1]! >= bound)) return -1;
    let i = 1;
    while (i < this.capacity) i = this.nodes[2 * i + 1]! >= bound ? 2 * i + 1 : 2 * i;
    return i - this.capacity;
  }

  /** Every slot unset. */
  clear(): void {
    this.nodes.fill(-Infinity);
  }

  private grow(): void {
    const old = this.nodes;
    const capacity = this.capacity * 2;
    const nodes = new Float64Array(2 * capacity).fill(-Infinity);
    nodes.set(old.subarray(this.capacity, 2 * this.capacity), capacity);
    for (let i = capacity - 1; i >= 1; i--) nodes[i] = Math.max(nodes[2 * i]!, nodes[2 * i + 1]!);
    this.nodes = nodes;
    this.capacity = capacity;
  }
}
