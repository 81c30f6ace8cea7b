// A program's request stream at a size it was never recorded at, from recordings of it at two sizes or
// more (one SizePredictor, asked at as many sizes as wanted): the recording nearest the target is the skeleton (its requests in its order); every other
// recording is aligned with it request by request (a diff of tokens: recording-tokens.ts); each of the
// skeleton's allocations aligned in the others gets the size its law gives at the target (size-law.ts),
// and one aligned in none keeps the skeleton's size. The stream then replays like any other.
import { commonSubsequence } from '../../lib/diff';
import { grouped } from '../../lib/grouped';
import { ImportError } from '../../lib/import-error';
import { stackSite, type StackOf } from '../measures/memory-by-stack';
import { RequestKind, type RequestStream } from '../stream/request-stream';
import { alignedByOrder, requestTokens, TokenDictionary } from './recording-tokens';
import { couldFollow, lawAt, lawDegree, UNCLEAN } from './size-law';
import { hasCppFrames, matchStacks, type AllocationStacks } from '../measures/allocation-stacks';
import type { Frame } from '../snapshot/snapshot';
import type { AddressLayout } from './address-layouts';

/** One recording of the program, at `size` (a batch size, a sequence length: the user's number). */
export interface SizedRecording {
  name: string;
  size: number;
  stream: RequestStream;
  stacks: AllocationStacks;
}

export interface Prediction {
  /** The program's requests at the target size. */
  stream: RequestStream;
  target: number;
  /** The recording whose requests are the skeleton (the nearest to the target). */
  skeleton: { name: string; size: number };
  /** For each other recording: the share of allocations aligned between it and the skeleton (of the larger count of the two). */
  aligned: { name: string; size: number; share: number }[];
  /** The skeleton's allocations by the law their sizes follow: constant, linear, quadratic, none (not clean), unaligned. */
  laws: { constant: number; linear: number; quadratic: number; unclean: number; unaligned: number };
  /** Allocation sites (innermost frame shown) whose sizes follow no clean law, most allocations first. */
  uncleanSites: { site: string; allocations: number }[];
  /** How far the target lies outside the recorded sizes (2 = twice the largest, or half the smallest); null inside. */
  extrapolation: number | null;
  /** The skeleton's allocations that are cuDNN convolutions' workspaces (known by their C++ frames): their
   * sizes follow the algorithm cuDNN picks at each size, which recordings at other sizes cannot tell. */
  cudnnWorkspaces: number;
  /** The skeleton's allocations whose size no law measured here tells (ids): cuDNN's workspaces, the
   * scratch a CUDA reduction kernel sizes by its launch (saturating with the GPU's multiprocessors), and
   * those no other recording has. The prediction keeps the skeleton's bytes; the band counts them. */
  librarySized: ReadonlySet<number>;
  /** Each recording's own segment addresses: the layouts besides the driver model's that a verdict
   * under a cap is judged by (address-layouts.ts). */
  layouts: AddressLayout[];
}

const PYTHON_FRAMES_ALONE =
  "The recordings have Python frames alone: the backward pass's allocations, which have no Python stack, are aligned by their order, " +
  "and cuDNN's workspaces cannot be named. Recorded with C++ frames too (stacks='all', _record_memory_history's default), they align " +
  'by their C++ stacks (resnet50 at batch 8 from 16 and 32: peak allocated 0.45% off rather than 1.21%).';

/** A CUDA reduction's scratch: allocated by ATen's gpu_reduce_kernel itself, sized by the launch it
 * picks (blocks per output, capped by the GPU's multiprocessors), not by a law of the program's size. */
const isKernelScratch = (stack: readonly Frame[] | string): boolean =>
  typeof stack !== 'string' && stack.slice(0, 12).some((f) => f.name.includes('at::native::gpu_reduce_kernel<'));

/** The allocations of `s` freed within a few requests of their own (alloc, the op's output, free): a
 * workspace's pattern, and a temporary's. */
function opLocal(s: RequestStream): Set<number> {
  // Ids are dense (0 to idCount): each one's alloc index in a typed array, not a Map.
  const at = new Float64Array(s.idCount).fill(-Infinity);
  const out = new Set<number>();
  for (let i = 0; i < s.length; i++) {
    const id = s.id[i]!;
    if (s.kind[i] === RequestKind.alloc) at[id] = i;
    else if (s.kind[i] === RequestKind.free && i - at[id]! <= OP_LOCAL) out.add(id);
  }
  return out;
}

/** Requests between an allocation and its free within which one op made and freed it. */
const OP_LOCAL = 3;

/** Below this share of allocations aligned, two recordings are taken for different programs. */
const SAME_PROGRAM_SHARE = 0.5;

/** The skeleton: the recording nearest `target` on a log scale (the larger on a tie, which has every request the smaller has). */
function nearest(recordings: readonly SizedRecording[], target: number): SizedRecording {
  const distance = (r: SizedRecording): number => Math.abs(Math.log(r.size / target));
  return recordings.reduce((a, b) => (distance(b) < distance(a) || (distance(b) === distance(a) && b.size > a.size) ? b : a));
}

function siteOf(stackOf: StackOf, id: number): string {
  return stackSite(stackOf(id));
}

/** What predicting from one skeleton needs whatever the target: each allocation's law, and the fit's figures. */
interface SkeletonFit {
  skeleton: SizedRecording;
  allocs: number;
  /** Per request of the skeleton: its allocation's law's degree (-1: a free, or aligned nowhere else;
   * UNCLEAN: no clean law) ... */
  degree: Int8Array;
  /** ... through its bytes in each recording, by recording in ascending size (NaN: not aligned there). */
  bytes: Float64Array;
  aligned: Prediction['aligned'];
  counts: Prediction['laws'];
  uncleanSites: Prediction['uncleanSites'];
  cudnnWorkspaces: number;
  librarySized: Set<number>;
}

/**
 * Predicts a program's request stream at any size from its recordings at two sizes or more. The
 * alignment and each allocation's law are worked out once per skeleton, so that predicting at many
 * sizes (the largest that fits) costs an evaluation of the laws each.
 */
export class SizePredictor {
  private readonly fits = new Map<SizedRecording, SkeletonFit>();
  private readonly tokens: Map<SizedRecording, Int32Array>;
  /** Per recording, the requests whose stack names nothing (aligned by order and size alone). */
  private readonly byOrder: Map<SizedRecording, Uint8Array>;
  /** The recordings by size, smallest first: the order of each allocation's points. */
  private readonly ascending: readonly SizedRecording[];
  readonly sizes: readonly number[];
  /** Whether the recordings have C++ frames (else the backward pass aligns by order alone, and cuDNN's workspaces go unnamed). */
  private readonly withCpp: boolean;
  private readonly layouts: AddressLayout[];

  constructor(readonly recordings: readonly SizedRecording[]) {
    if (recordings.length < 2) throw new ImportError('bad-shape', 'A prediction needs recordings of the program at two sizes or more.');
    this.sizes = recordings.map((r) => r.size);
    if (new Set(this.sizes).size !== this.sizes.length) throw new ImportError('bad-shape', `Two recordings are at the same size (${this.sizes.join(', ')}): give each its own.`);
    for (const r of recordings) {
      if (!(r.size > 0) || !Number.isFinite(r.size)) throw new ImportError('bad-shape', `${r.name}: a recording's size must be a number above 0, not ${r.size}.`);
    }
    const dictionary = new TokenDictionary();
    this.tokens = new Map(recordings.map((r) => [r, requestTokens(r.stream, r.stacks, dictionary)]));
    this.byOrder = new Map(recordings.map((r) => [r, alignedByOrder(r.stream, r.stacks)]));
    this.ascending = [...recordings].sort((a, b) => a.size - b.size);
    this.withCpp = recordings.some((r) => hasCppFrames(r.stacks));
    this.layouts = this.ascending
      .filter((r) => r.stream.recordedSegments.length + r.stream.recordedMappings.length > 0)
      .map((r) => ({ name: r.name, segments: r.stream.recordedSegments, mappings: r.stream.recordedMappings }));
  }

  /** The stream at `target`, from the nearest recording's requests, or from `skeleton`'s (one of the
   * recordings: the prediction band measures what the choice of skeleton costs). */
  at(target: number, skeleton?: SizedRecording): Prediction {
    if (!(target > 0) || !Number.isFinite(target)) throw new ImportError('bad-shape', `The size to predict must be a number above 0, not ${target}.`);
    const fit = this.fitOf(skeleton ?? nearest(this.recordings, target));
    const s = fit.skeleton.stream;
    const size = new Float64Array(s.size);
    const R = this.ascending.length;
    const xs = new Float64Array(R);
    const ys = new Float64Array(R);
    const byId = new Float64Array(s.idCount).fill(-1);
    for (let i = 0; i < s.length; i++) {
      const degree = fit.degree[i]!;
      if (degree < 0) continue;
      const n = this.pointsOf(fit.bytes, i, xs, ys);
      byId[s.id[i]!] = size[i] = lawAt(degree as 0 | 1 | 2 | typeof UNCLEAN, xs, ys, n, target);
    }
    // A free carries its allocation's requested bytes.
    for (let i = 0; i < s.length; i++) {
      if (s.kind[i] !== RequestKind.alloc && byId[s.id[i]!]! >= 0) size[i] = byId[s.id[i]!]!;
    }
    const lo = Math.min(...this.sizes);
    const hi = Math.max(...this.sizes);
    const { counts } = fit;
    const stream: RequestStream = {
      ...s,
      size,
      // The skeleton's cudaMalloc addresses belong to its own sizes: a predicted run places its segments itself.
      recordedSegments: [],
      recordedMappings: [],
      notes: [
        ...s.notes,
        `Predicted at size ${grouped(target)} from ${this.recordings.map((r) => `${r.name} (${grouped(r.size)})`).join(' and ')}: ` +
          `the requests of ${fit.skeleton.name}, the sizes of ${grouped(counts.linear + counts.quadratic + counts.constant + counts.unclean)} of its ${grouped(fit.allocs)} allocations ` +
          'from how they grow with the size.',
        ...(this.withCpp ? [] : [PYTHON_FRAMES_ALONE]),
      ],
    };
    return {
      stream,
      target,
      skeleton: { name: fit.skeleton.name, size: fit.skeleton.size },
      aligned: fit.aligned,
      laws: counts,
      uncleanSites: fit.uncleanSites,
      extrapolation: target > hi ? target / hi : target < lo ? lo / target : null,
      cudnnWorkspaces: fit.cudnnWorkspaces,
      librarySized: fit.librarySized,
      layouts: this.layouts,
    };
  }

  /** Request i's recorded points into xs/ys (ascending size); their count. */
  private pointsOf(bytes: Float64Array, i: number, xs: Float64Array, ys: Float64Array): number {
    const R = this.ascending.length;
    let n = 0;
    for (let r = 0; r < R; r++) {
      const y = bytes[i * R + r]!;
      if (Number.isNaN(y)) continue;
      xs[n] = this.ascending[r]!.size;
      ys[n++] = y;
    }
    return n;
  }

  private fitOf(skeleton: SizedRecording): SkeletonFit {
    let fit = this.fits.get(skeleton);
    if (fit) return fit;
    const base = this.tokens.get(skeleton)!;
    const order = this.byOrder.get(skeleton)!;
    const s = skeleton.stream;
    let allocs = 0;
    let cudnnWorkspaces = 0;
    for (let i = 0; i < s.length; i++) {
      if (s.kind[i] !== RequestKind.alloc) continue;
      allocs++;
      if (s.cudnnWorkspaces.has(s.id[i]!)) cudnnWorkspaces++;
    }
    // Each skeleton alloc's bytes in every recording it aligns in.
    const R = this.ascending.length;
    const bytes = new Float64Array(s.length * R).fill(NaN);
    const aligned: Prediction['aligned'] = [];
    this.ascending.forEach((r, col) => {
      if (r === skeleton) {
        for (let i = 0; i < s.length; i++) if (s.kind[i] === RequestKind.alloc) bytes[i * R + col] = s.size[i]!;
        return;
      }
      const other = this.tokens.get(r)!;
      // Requests with no stack to tell them apart (a stacks='python' recording's backward pass) pair
      // only where their sizes could follow one law: a cuDNN workspace one run adds must not shift
      // every backward allocation after it onto its neighbour.
      const os = r.stream.size;
      const match = commonSubsequence(
        s.length,
        r.stream.length,
        (i, j) => base[i] === other[j] && (!order[i] || couldFollow(s.size[i]!, skeleton.size, os[j]!, r.size)),
      );
      let otherAllocs = 0;
      for (let j = 0; j < r.stream.length; j++) if (r.stream.kind[j] === RequestKind.alloc) otherAllocs++;
      let n = 0;
      for (let i = 0; i < s.length; i++) {
        const j = match[i]!;
        if (j < 0 || s.kind[i] !== RequestKind.alloc) continue;
        bytes[i * R + col] = r.stream.size[j]!;
        n++;
      }
      // Of the larger of the two: a small program's allocations all match within a larger one's.
      const share = n / Math.max(1, allocs, otherAllocs);
      if (share < SAME_PROGRAM_SHARE) {
        throw new ImportError(
          'bad-shape',
          `${r.name} and ${skeleton.name} do not look like one program at two sizes: only ${(share * 100).toFixed(0)}% of their allocations ` +
            'match by stack and order. Record the same program (the same script, a few steps each) at each size, with stacks.',
        );
      }
      aligned.push({ name: r.name, size: r.size, share });
    });
    const counts = { constant: 0, linear: 0, quadratic: 0, unclean: 0, unaligned: 0 };
    const librarySized = new Set<number>();
    const scratch = matchStacks(skeleton.stacks, isKernelScratch);
    // Without C++ frames a library's scratch cannot be named: any allocation its op frees at once may be one.
    const freedAt = this.withCpp ? null : opLocal(s);
    const unclean = new Map<string, number>();
    const degree = new Int8Array(s.length).fill(-1);
    const xs = new Float64Array(R);
    const ys = new Float64Array(R);
    for (let i = 0; i < s.length; i++) {
      if (s.kind[i] !== RequestKind.alloc) continue;
      const n = this.pointsOf(bytes, i, xs, ys);
      const id = s.id[i]!;
      if (n < 2 || s.cudnnWorkspaces.has(id) || scratch(id) || freedAt?.has(id)) librarySized.add(id);
      if (n < 2) {
        counts.unaligned++;
        continue;
      }
      const d = (degree[i] = lawDegree(xs, ys, n));
      if (d === 0) counts.constant++;
      else if (d === 1) counts.linear++;
      else if (d === 2) counts.quadratic++;
      else {
        counts.unclean++;
        const site = siteOf(skeleton.stacks.stackOf, s.id[i]!);
        unclean.set(site, (unclean.get(site) ?? 0) + 1);
      }
    }
    fit = {
      skeleton,
      allocs,
      degree,
      bytes,
      aligned,
      counts,
      uncleanSites: [...unclean].map(([site, allocations]) => ({ site, allocations })).sort((a, b) => b.allocations - a.allocations),
      cudnnWorkspaces,
      librarySized,
    };
    this.fits.set(skeleton, fit);
    return fit;
  }
}
