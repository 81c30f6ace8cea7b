import { GiB } from './constants';
import { formatSize } from './format-size';

/**
 * What limits cudaMalloc in the model.
 * - 'fraction': torch.cuda.set_per_process_memory_fraction. A segment fails when reserved + its size
 *   exceeds `bytes`; garbage_collection_threshold is relative to it (PyTorch runs gc only then).
 * - 'device': only the device's memory limits; no gc.
 */
export interface Capacity {
  kind: 'fraction' | 'device';
  bytes: number;
}

/** total_memory of an NVIDIA H200 as torch.cuda.get_device_properties reports it. */
export const H200_TOTAL_MEMORY = 150_109_880_320;

/** total_memory of the cards recordings were seen from (the H100 80GB HBM3's read on the device). */
export const KNOWN_DEVICE_TOTALS: readonly number[] = [85_017_493_504, H200_TOTAL_MEMORY];

/** The cards a cap is usually asked for, smallest first (a card's whole memory as the cap). */
export const CARDS: readonly { name: string; examples: string; bytes: number }[] = [
  { name: '24 GB card', examples: 'RTX 3090/4090, 24 GiB', bytes: 24 * GiB },
  { name: '40 GB card', examples: 'A100 40GB, 40 GiB', bytes: 40 * GiB },
  { name: '80 GB card', examples: 'A100/H100 80GB, 80 GiB', bytes: 80 * GiB },
  // In GiB as the others read (its byte count, 150,109,880,320, is what --capacity H200 stands for).
  { name: 'H200', examples: `its whole ${formatSize(H200_TOTAL_MEMORY)}`, bytes: H200_TOTAL_MEMORY },
];

/** The cap a per_process_memory_fraction key sets (as set_per_process_memory_fraction: fraction x the
 * device's memory, rounded down); none at 1. */
export function fractionCapacity(fraction: number | undefined, deviceTotal: number): Capacity | undefined {
  return fraction !== undefined && fraction < 1 ? { kind: 'fraction', bytes: Math.floor(fraction * deviceTotal) } : undefined;
}
