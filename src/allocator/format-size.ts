import { GiB, KiB, MiB } from './constants';

/** Bytes as PyTorch's format_size() prints them (OOM messages, memory_summary). */
export function formatSize(bytes: number): string {
  if (bytes <= KiB) return `${bytes} bytes`;
  if (bytes <= MiB) return `${(bytes / KiB).toFixed(2)} KiB`;
  if (bytes <= GiB) return `${(bytes / MiB).toFixed(2)} MiB`;
  return `${(bytes / GiB).toFixed(2)} GiB`;
}
