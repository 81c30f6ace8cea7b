// Axis ticks for bytes at round multiples of one binary unit (1 GiB, 2 GiB ...), labelled in the unit
// PyTorch's format_size would pick for the axis top, so that one axis never mixes "1024.00 MiB" and "2.00 GiB".
import { tickStep, ticks } from 'd3';
import { GiB, KiB, MiB } from '../allocator/constants';

export interface ByteAxis {
  /** Top of the axis domain: the data maximum rounded up to a tick. */
  top: number;
  ticks: number[];
  format(bytes: number): string;
}

export function byteAxis(maxBytes: number, count = 5): ByteAxis {
  const max = Math.max(maxBytes, 1);
  // format_size's thresholds: <= 1 KiB bytes, <= 1 MiB KiB, <= 1 GiB MiB, else GiB.
  const [unit, name] = max <= KiB ? [1, 'bytes'] : max <= MiB ? [KiB, 'KiB'] : max <= GiB ? [MiB, 'MiB'] : [GiB, 'GiB'];
  const step = tickStep(0, max / unit, count);
  const top = Math.ceil(max / unit / step) * step;
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return {
    top: top * unit,
    ticks: ticks(0, top, Math.round(top / step)).map((t) => t * unit),
    format: (bytes) => `${(bytes / unit).toFixed(digits)} ${name}`,
  };
}
