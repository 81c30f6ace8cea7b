// Hostile snapshot files, generated small (issue 44): what a file says is little, what its references or
// its compression expand to is much. The bad-input corpus (bad-inputs.test.ts) holds each to its exit
// code and message; `npm run bench -- bad-inputs` times each against the goal (10 s, 4x its size).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { writePickle, type PickleWritable } from '../../src/trace/pickle/pickle-writer';

/** A snapshot with `entries` trace entries that share one list of `frames` frames (the pickle's memo). */
export function sharedFrames(entries: number, frames: number): Uint8Array {
  const list = Array.from({ length: frames }, (_, i) => ({ filename: `/a/rather/long/path/to/module_${i}.py`, line: i, name: `function_${i}` }));
  const base = 2 ** 32;
  const trace: PickleWritable[] = [{ action: 'segment_alloc', addr: base, size: 2 ** 21, stream: 0, time_us: 0, frames: list }];
  for (let i = 0; trace.length < entries; i++) {
    const addr = base + (i % 64) * 512;
    trace.push({ action: 'alloc', addr, size: 512, stream: 0, time_us: i, frames: list });
    trace.push({ action: 'free_requested', addr, size: 512, stream: 0, time_us: i, frames: list });
    trace.push({ action: 'free_completed', addr, size: 512, stream: 0, time_us: i, frames: list });
  }
  return writePickle({ segments: [], device_traces: [trace] });
}

/** A snapshot whose one entry says `size` bytes (as an alloc after its segment, or as an oom). */
function sized(size: number): Uint8Array {
  const e = (action: string, addr: number, s: number) => ({ action, addr, size: s, stream: 0, time_us: 0, frames: [] });
  return writePickle({ segments: [], device_traces: [[e('segment_alloc', 2 ** 40, 2 ** 21), e('alloc', 2 ** 40, size)]] });
}

/** A pickle that asks for 1 GiB of zeros in one BINBYTES8, gzip-compressed to about 1 MB. */
function gzipBomb(): Uint8Array {
  const head = Buffer.from('\x80\x04}(\x8c\x08segments]\x8c\x05extra\x8e', 'latin1');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(2n ** 30n);
  return gzipSync(Buffer.concat([head, len, Buffer.alloc(2 ** 30), Buffer.from('u.', 'latin1')]), { level: 9 });
}

/** Writes each hostile file into `dir`: evil.pickle, shared.pickle, bomb.pickle.gz, digits.pickle,
 * long4.pickle, digits.json, huge-alloc.pickle. */
export function writeHostileFiles(dir: string): void {
  const at = (name: string): string => join(dir, name);
  // GLOBAL os.system, then REDUCE: a pickle that would run code.
  writeFileSync(at('evil.pickle'), Buffer.from("\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.", 'latin1'));
  writeFileSync(at('shared.pickle'), sharedFrames(30_000, 2_000));
  writeFileSync(at('bomb.pickle.gz'), gzipBomb());
  const digits = '9'.repeat(2_000_000);
  const entry = (addr: Buffer): Buffer =>
    Buffer.concat([Buffer.from('\x80\x04}(\x8c\x08segments]\x8c\x0edevice_traces](]}(\x8c\x06action\x8c\x05alloc\x8c\x04addr', 'latin1'), addr, Buffer.from('\x8c\x04sizeK\x10\x8c\x06streamK\x00uaeu.', 'latin1')]);
  writeFileSync(at('digits.pickle'), entry(Buffer.from(`L${digits}L\n`, 'latin1')));
  const long4 = Buffer.alloc(3_000_000, 7);
  const n = Buffer.alloc(4);
  n.writeInt32LE(long4.length);
  writeFileSync(at('long4.pickle'), entry(Buffer.concat([Buffer.from('\x8b', 'latin1'), n, long4])));
  writeFileSync(at('digits.json'), `{"segments":[],"device_traces":[[{"action":"alloc","addr":${digits},"size":16,"stream":0}]]}`);
  writeFileSync(at('huge-alloc.pickle'), sized(2 ** 52));
}
