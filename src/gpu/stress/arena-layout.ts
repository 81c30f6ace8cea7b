// How physical device bytes map onto arena words (u32): 1:1 when the arena holds the whole simulated
// device, else scaled down. The map is monotone and blocks are half-open ranges rounded the same way
// at both ends, so disjoint blocks always get disjoint words; a block smaller than one word's worth
// of device bytes may get none.

export const WORD_BYTES = 4;

export class ArenaLayout {
  /** Arena words per device byte: 1/4 at 1:1, less when scaled. */
  readonly scale: number;

  constructor(
    readonly arenaWords: number,
    readonly deviceBytes: number,
  ) {
    this.scale = Math.min(1 / WORD_BYTES, arenaWords / deviceBytes);
  }

  get oneToOne(): boolean {
    return this.scale === 1 / WORD_BYTES;
  }

  /** The first word at or after physical byte `phys`. Monotone: a < b implies wordAt(a) <= wordAt(b). */
  wordAt(phys: number): number {
    return Math.min(this.arenaWords, Math.ceil(phys * this.scale));
  }
}
