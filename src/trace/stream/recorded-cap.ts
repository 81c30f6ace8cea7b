// The memory cap a recording ran under, as far as its trace shows it. Neither a
// set_per_process_memory_fraction cap nor the GPU's size is in a snapshot, but every cudaMalloc that
// succeeded fit under the cap, and every one that failed (an OOM, or a cache release before a retry)
// did not: the cap lies in an interval, and a replay under any value in it makes the recorded decisions.
import type { Capacity } from '../../allocator/capacity';
import type { AllocatorConfig } from '../../allocator/config';
import { formatSize } from '../../allocator/format-size';
import { segmentSizeFor } from '../../allocator/sizes';
import { grouped } from '../../lib/grouped';

export interface RecordedCap {
  /** 'fraction': set_per_process_memory_fraction (the device had room); 'device': the GPU was full. */
  kind: 'fraction' | 'device';
  /** The cap is at least `lo` and at most `hi` bytes. */
  lo: number;
  hi: number;
  /** The value replays use: the roundest number in [lo, hi] (caps are set as round numbers). */
  bytes: number;
  /** What showed it: the recording's OOM, or a cudaMalloc that failed and was retried. */
  from: 'oom' | 'retry';
}

/** Collects the trace's evidence about the cap, in bytes relative to what was reserved at its start. */
export class CapEvidence {
  /** Reserved bytes now, less those reserved before the trace began. */
  private delta = 0;
  /** Largest reserved + new segment that fit; smallest that did not. */
  private fit = 0;
  private misfit = Infinity;
  private oom = false;
  private deviceFull = false;

  constructor(private readonly config: AllocatorConfig) {}

  /** A segment (or expandable pages) was reserved: it fit. */
  reserved(size: number): void {
    this.fit = Math.max(this.fit, this.delta + size);
    this.delta += size;
  }

  released(size: number): void {
    this.delta -= size;
  }

  /** A malloc released cached segments (from `before` reserved bytes) and then got a segment of
   * `size`: its first cudaMalloc had failed. Not under gc, which frees before any attempt. */
  retried(before: number, size: number): void {
    if (this.config.garbageCollectionThreshold > 0) return;
    this.misfit = Math.min(this.misfit, before + size);
  }

  /** The reserved bytes now, relative to the trace's start (for retried()). */
  get now(): number {
    return this.delta;
  }

  /** An OOM for a request rounded to `rounded` bytes, with `deviceFree` bytes free on the device. */
  failed(rounded: number, deviceFree: number): void {
    const size = segmentSizeFor(rounded, this.config.largeSegmentSize);
    this.misfit = Math.min(this.misfit, this.delta + size);
    this.oom = true;
    if (deviceFree < size) this.deviceFull = true;
  }

  /** The cap, given what was reserved before the trace began; null when nothing failed. */
  cap(initialReserved: number): RecordedCap | null {
    if (!Number.isFinite(this.misfit)) return null;
    const lo = initialReserved + this.fit;
    const hi = initialReserved + this.misfit - 1;
    if (hi < lo) return null; // contradictory: the trace's decisions did not come from one cap
    return { kind: this.deviceFull ? 'device' : 'fraction', lo, hi, bytes: roundestIn(lo, hi), from: this.oom ? 'oom' : 'retry' };
  }
}

/** The number in [lo, hi] with the most trailing zeros, in binary (GiB, MiB) or decimal (GB, MB) units. */
export function roundestIn(lo: number, hi: number): number {
  let best = lo;
  let bestStep = 1;
  for (const base of [2, 10]) {
    for (let step = base === 2 ? 2 ** 42 : 1e13; step >= 1; step /= base) {
      const m = Math.ceil(lo / step) * step;
      if (m <= hi) {
        if (step > bestStep) {
          best = m;
          bestStep = step;
        }
        break;
      }
    }
  }
  return best;
}

/** The cap a replay of a recording that ended in an OOM takes when none is given: the one it shows. */
export function oomCap(stream: { recordedCap?: RecordedCap }): RecordedCap | null {
  return stream.recordedCap?.from === 'oom' ? stream.recordedCap : null;
}

export function capOf(cap: RecordedCap): Capacity {
  return { kind: cap.kind, bytes: cap.bytes };
}

/** What a replay says of the cap its recording shows: `used`, that it replays under it. */
export function capNote(cap: RecordedCap, used: boolean): string {
  const what = cap.kind === 'device' ? 'The GPU was full' : 'The recording ran under a memory cap';
  const source = cap.from === 'oom' ? 'the recorded OOM' : 'the cudaMalloc calls that failed and were retried';
  return (
    `${what}: inferred from ${source}, the cap was between ${formatSize(cap.lo)} and ${formatSize(cap.hi)} ` +
    `(${grouped(cap.lo)} and ${grouped(cap.hi)} bytes). ` +
    (used ? `Replayed with ${formatSize(cap.bytes)}; give a capacity to replay under another.` : `Give it as the capacity (e.g. ${formatSize(cap.bytes)}) for an exact replay.`)
  );
}
