// Addresses -> small ints in two typed arrays (open addressing, linear probing). A Map keyed by
// addresses above 2^31 boxes every key it stores, and a trace has hundreds of thousands.

const EMPTY = -1;

export class AddressTable {
  private keys: Float64Array;
  private values: Int32Array;
  private shift: number;
  private count = 0;

  /** `expected`: about how many entries will be live at once (it grows past that). */
  constructor(expected = 1024) {
    let bits = 4;
    while (1 << bits < expected * 2) bits++;
    this.keys = new Float64Array(1 << bits);
    this.values = new Int32Array(1 << bits).fill(EMPTY);
    this.shift = 32 - bits;
  }

  /** The value stored for `addr` (an integer, 0 <= addr < 2^53), or -1. */
  get(addr: number): number {
    const { keys, values } = this;
    const mask = keys.length - 1;
    for (let i = this.slot(addr); ; i = (i + 1) & mask) {
      const v = values[i]!;
      if (v === EMPTY || keys[i] === addr) return v;
    }
  }

  /** Stores `value` (>= 0) for `addr`. */
  set(addr: number, value: number): void {
    const { keys, values } = this;
    const mask = keys.length - 1;
    let i = this.slot(addr);
    while (values[i] !== EMPTY && keys[i] !== addr) i = (i + 1) & mask;
    if (values[i] === EMPTY) this.count++;
    keys[i] = addr;
    values[i] = value;
    if (this.count * 2 > keys.length) this.grow();
  }

  /** Removes `addr`; false when it was not there. */
  delete(addr: number): boolean {
    const { keys, values } = this;
    const mask = keys.length - 1;
    let i = this.slot(addr);
    while (values[i] !== EMPTY && keys[i] !== addr) i = (i + 1) & mask;
    if (values[i] === EMPTY) return false;
    // Backward-shift deletion: move later entries of the probe run into the gap, so that no
    // tombstones are needed and lookups stop at the first empty slot.
    let gap = i;
    for (let j = (i + 1) & mask; values[j] !== EMPTY; j = (j + 1) & mask) {
      const home = this.slot(keys[j]!);
      // Entry j may move to the gap unless its home lies cyclically in (gap, j].
      if (((j - home) & mask) >= ((j - gap) & mask)) {
        keys[gap] = keys[j]!;
        values[gap] = values[j]!;
        gap = j;
      }
    }
    values[gap] = EMPTY;
    this.count--;
    return true;
  }

  /** Fibonacci hashing of the address's two 32-bit halves (addresses are multiples of 512). */
  private slot(addr: number): number {
    const lo = addr >>> 0;
    const hi = (addr - lo) / 4294967296;
    return Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> this.shift;
  }

  private grow(): void {
    const { keys, values } = this;
    const bits = 32 - this.shift + 1;
    this.keys = new Float64Array(1 << bits);
    this.values = new Int32Array(1 << bits).fill(EMPTY);
    this.shift = 32 - bits;
    this.count = 0;
    for (let i = 0; i < keys.length; i++) if (values[i] !== EMPTY) this.set(keys[i]!, values[i]!);
  }
}
