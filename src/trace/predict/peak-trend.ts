// The recordings' own peaks against their sizes: a least-squares line through them, and how closely they
// lie on it. Set beside the request-level prediction, it is a second opinion on the peaks: inside the
// recorded sizes the request-level prediction is trusted (it replays the allocator's own decisions at the
// size, which a line through a few peaks cannot see: a segment more or less, fragmentation); beyond
// them, where three recordings or more lie on their line within TRUSTED_RESIDUAL and the prediction
// leaves the line by more than its error band, the line is (a request stream extrapolated allocation by
// allocation carries every law's error at once, and a recording whose backward pass has no frames aligns
// by order alone). Either way both figures are said.
import type { Peaks } from './prediction-band';

/** The recordings' peaks may stray this far from their line, each, for the line to be trusted beyond them. */
export const TRUSTED_RESIDUAL = 0.005;

export interface PeakTrend {
  /** The line's peaks at the target. */
  reserved: number;
  allocated: number;
  /** The largest relative distance of a recorded peak (reserved or allocated) from the line; null with
   * two recordings (a line through two points says nothing of itself). */
  residual: number | null;
  /** How far the prediction's peaks lie from the line's, relative to the line's. */
  reservedOff: number;
  allocatedOff: number;
  /** Which the peaks are taken from, and why, in words. */
  trusted: 'requests' | 'trend';
  why: string;
}

function line(points: readonly { size: number; value: number }[]): (x: number) => number {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.size, 0) / n;
  const my = points.reduce((a, p) => a + p.value, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.size - mx) * (p.value - my);
    sxx += (p.size - mx) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  return (x) => my + slope * (x - mx);
}

/**
 * The trend of `recorded` (each recording's size and peaks) at `target`, beside the prediction's `peaks`
 * there; `band`: the prediction's relative half-width on peak reserved; `extrapolation`: how far beyond
 * the recorded sizes the target lies (null inside).
 */
export function peakTrend(recorded: readonly ({ size: number } & Peaks)[], target: number, peaks: Peaks, band: number, extrapolation: number | null): PeakTrend {
  const reservedLine = line(recorded.map((r) => ({ size: r.size, value: r.reserved })));
  const allocatedLine = line(recorded.map((r) => ({ size: r.size, value: r.allocated })));
  const residual =
    recorded.length >= 3
      ? Math.max(...recorded.flatMap((r) => [Math.abs(reservedLine(r.size) / r.reserved - 1), Math.abs(allocatedLine(r.size) / r.allocated - 1)]))
      : null;
  const reserved = Math.max(0, reservedLine(target));
  const allocated = Math.max(0, allocatedLine(target));
  const reservedOff = reserved > 0 ? peaks.reserved / reserved - 1 : 0;
  const allocatedOff = allocated > 0 ? peaks.allocated / allocated - 1 : 0;
  const pct = (x: number) => `${(Math.abs(x) * 100).toFixed(1)}%`;
  let trusted: PeakTrend['trusted'] = 'requests';
  let why: string;
  if (extrapolation === null) {
    why = 'inside the recorded sizes the request-level prediction replays the allocator at this size, which a line through the peaks cannot see';
  } else if (residual === null) {
    why = 'a line through two recordings cannot say how straight the peaks run: record a third size to check it';
  } else if (residual > TRUSTED_RESIDUAL) {
    why = `the recordings' peaks stray up to ${pct(residual)} from their line, so the line is no better a guess`;
  } else if (Math.abs(reservedOff) <= band && Math.abs(allocatedOff) <= band) {
    why = `the recordings' peaks lie on their line within ${pct(residual)}, and the prediction agrees with it within its error band`;
  } else {
    trusted = 'trend';
    why =
      `the recordings' peaks lie on their line within ${pct(residual)}, and the request-level prediction leaves it by ${pct(Math.max(Math.abs(reservedOff), Math.abs(allocatedOff)))}, ` +
      'more than its error band: beyond the recorded sizes a request stream extrapolated allocation by allocation carries every law\'s error at once, so the line is the better guess of the peaks';
  }
  return { reserved, allocated, residual, reservedOff, allocatedOff, trusted, why };
}
