import { ConfigError } from './config-error';

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** "6442450944", "6 GiB", "24GB", "1.5 TiB" -> bytes (KB/MB/GB decimal, KiB/MiB/GiB binary). */
export function parseByteSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)\s*$/i.exec(text);
  const unit = match ? UNITS[(match[2] || 'b').toLowerCase()] : undefined;
  if (!match || unit === undefined) {
    throw new ConfigError(
      `'${text}' is not a size: give bytes, or a number with KB/MB/GB (decimal) or KiB/MiB/GiB (binary), e.g. 80GB or 6GiB.`,
    );
  }
  const bytes = Math.round(Number(match[1]) * unit);
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new ConfigError(`'${text}' is not a usable size: it must be more than 0 and below 2^53 bytes.`);
  }
  return bytes;
}
