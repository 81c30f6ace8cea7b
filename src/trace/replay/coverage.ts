// How much of the program a replay covers, and what may be said of a replay's OOMs within that: a
// recording that ends at its OOM (an out-of-memory observer's dump) or begins mid-run (a ring buffer,
// history switched on late) shows only part of the run, so a what-if with no OOM says "no OOM through
// request N, where the recording ends", never that the OOM is avoided. Requests are numbered from 0
// everywhere (the CLI's --until and JSON, the page, links).
import { grouped } from '../../lib/grouped';
import type { RequestStream } from '../stream/request-stream';

export interface Coverage {
  /** Requests replayed: 0 .. requests - 1. */
  requests: number;
  /** The recording ends at this request's OOM (nothing after it was recorded), else null: the program's
   * OOM, or one PyTorch caught (a cuDNN workspace's), where an observer dumped the snapshot all the same. */
  endsAtOom: number | null;
  /** The recording began mid-run: what came before was not recorded. */
  beganMidRun: boolean;
}

export function coverageOf(stream: RequestStream): Coverage {
  // The failed alloc, then its stand-in free, close the stream of an observer's dump (of an OOM the
  // program saw or one PyTorch caught: both are failedInRecording).
  const endsAtOom = stream.length >= 2 && stream.failedInRecording.has(stream.id[stream.length - 1]!) ? stream.length - 2 : null;
  return { requests: stream.length, endsAtOom, beganMidRun: stream.initialSegments.length > 0 || stream.initialBlocks.length > 0 };
}

/** The replay is the whole program's run, so "avoids the OOM" may be said of it. */
export const wholeRun = (c: Coverage): boolean => c.endsAtOom === null && !c.beganMidRun;

/** The last request replayed, as the page and the CLI number it. */
const lastRequest = (c: Coverage): string => grouped(Math.max(0, c.requests - 1));

/**
 * A replay's OOM outcome in words, as far as the recording reaches: "no OOM", "no OOM through request
 * N, where the recording ends", or "OOM at request K".
 */
export function oomOutcome(firstOom: number | null, c: Coverage): string {
  if (firstOom !== null) return `OOM at request ${grouped(firstOom)}`;
  if (c.endsAtOom !== null) return `no OOM through request ${lastRequest(c)}, where the recording ends`;
  if (c.beganMidRun) return `no OOM in the recorded requests (0 to ${lastRequest(c)}; the recording began mid-run)`;
  return 'no OOM';
}

/** What a replay with no OOM cannot say, for a recording that does not cover the whole run (else ''). */
export function coverageCaveat(c: Coverage): string {
  if (c.endsAtOom !== null) {
    return `The recording ends at an OOM (request ${grouped(c.endsAtOom)}): what the program did after it was never recorded, so a replay with no OOM through its last request does not show that the run would have finished.`;
  }
  if (c.beganMidRun) {
    return 'The recording began mid-run (a history ring buffer, or recording switched on late): a replay covers only the recorded requests, and what came before them replays as it was recorded.';
  }
  return '';
}
