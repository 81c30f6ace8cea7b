// Runs batch plans on the GPU: verify, fill, op (touch) and verify again over chunk tables, and the plain
// streaming kernels the benchmark compares them with. One instance per device and arena buffer.
import { CHUNK_U32S, CHUNK_WORDS } from './block-chunks';
import { SHADERS, type KernelName } from './shader-sources';
import { workGroups } from './work-groups';
import { OP_U32S, type BatchPlan } from './stress-run';

type TableKernel = 'fill' | 'touch' | 'verify';
/** The tables a batch uploads, in the order its dispatches run: `freed` goes through verify. */
type PlanTable = 'freed' | 'fill' | 'touch' | 'verify';
const PLAN_ORDER: readonly PlanTable[] = ['freed', 'fill', 'touch', 'verify'];
const PIPELINE: Record<PlanTable, TableKernel> = { freed: 'verify', fill: 'fill', touch: 'touch', verify: 'verify' };

/** Per-dimension workgroup limit of WebGPU's defaults. */
const MAX_GROUPS_X = 65535;

/**
 * Submissions in flight at once. Each has its own readback buffer; the tables and the counters are
 * rewritten in queue order (writeBuffer runs after the work submitted before it), so the next
 * submission can be encoded while the GPU still runs the last one and its counts are on their way.
 */
export const SUBMISSIONS_IN_FLIGHT = 3;

/**
 * Batches one submission carries at most: they share its fixed cost (uploads, the submit, the
 * counts' readback), each still run in order (live-run.ts picks how many).
 */
export const BATCHES_PER_SUBMIT = 16;

/** Bytes between the batches' parameters in the uniform buffer (WebGPU's default offset alignment). */
const PARAMS_STRIDE = 256;

export interface BatchResult {
  /** Words of live blocks that did not hold their pattern at verify. */
  verifyMismatches: number;
  /** Input words the ops read that did not hold their pattern. */
  opMismatches: number;
}

/** Uploads `data` into `current`, or into a new buffer when it does not fit (destroying the old one). */
function upload(device: GPUDevice, current: GPUBuffer | null, data: Uint32Array<ArrayBuffer>, usage: number): GPUBuffer {
  let buffer = current;
  if (!buffer || buffer.size < data.byteLength) {
    buffer?.destroy();
    buffer = device.createBuffer({ size: Math.max(16, data.byteLength, (buffer?.size ?? 0) * 2), usage: usage | GPUBufferUsage.COPY_DST });
  }
  if (data.byteLength > 0) device.queue.writeBuffer(buffer, 0, data);
  return buffer;
}

/**
 * One kernel's tables for the batches of a submission, end to end in one buffer, with their
 * workgroup shares in another; batch i's dispatch reads its shares' range from parameter slot i
 * (its own bind group), so one upload serves every batch of the submission.
 */
class Table {
  entries: GPUBuffer | null = null;
  groups: GPUBuffer | null = null;
  readonly params: GPUBuffer;
  /** Per parameter slot (null: to make, after a buffer was replaced). */
  bindGroups: (GPUBindGroup | null)[] = [];
  private readonly slots = new Uint32Array((BATCHES_PER_SUBMIT * PARAMS_STRIDE) / 4);

  constructor(private readonly device: GPUDevice) {
    this.params = device.createBuffer({ size: BATCHES_PER_SUBMIT * PARAMS_STRIDE, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  }

  /** Uploads one table per batch (`stride` u32s an entry); returns each batch's workgroup count. */
  upload(tables: readonly Uint32Array[], stride: number): number[] {
    let length = 0;
    for (const t of tables) length += t.length;
    const all = new Uint32Array(length);
    const shares: Uint32Array[] = [];
    const counts: number[] = [];
    let at = 0;
    let base = 0;
    for (let b = 0; b < tables.length; b++) {
      const t = tables[b]!;
      all.set(t, at);
      // Shares count entries from their own table's start: move them to where it lies in `all`.
      const s = workGroups(t, stride);
      for (let i = 0; i < s.length; i += 2) s[i]! += at / stride;
      shares.push(s);
      counts.push(s.length / 2);
      this.slots[(b * PARAMS_STRIDE) / 4] = s.length / 2;
      this.slots[(b * PARAMS_STRIDE) / 4 + 1] = base;
      base += s.length / 2;
      at += t.length;
    }
    const groups = new Uint32Array(2 * base);
    for (let b = 0, g = 0; b < shares.length; g += shares[b]!.length, b++) groups.set(shares[b]!, g);
    const entries = upload(this.device, this.entries, all, GPUBufferUsage.STORAGE);
    const shareBuffer = upload(this.device, this.groups, groups, GPUBufferUsage.STORAGE);
    // New buffers need new bind groups.
    if (entries !== this.entries || shareBuffer !== this.groups) this.bindGroups = [];
    this.entries = entries;
    this.groups = shareBuffer;
    this.device.queue.writeBuffer(this.params, 0, this.slots, 0, (tables.length * PARAMS_STRIDE) / 4);
    return counts;
  }

  destroy(): void {
    this.entries?.destroy();
    this.groups?.destroy();
    this.params.destroy();
  }
}

export class StressKernels {
  private readonly pipelines: Record<KernelName, GPUComputePipeline>;
  private readonly counterBuffer: GPUBuffer;
  private readonly readbacks: GPUBuffer[];
  /** Per readback buffer, its batch's counts being read (the buffer is free again once they are). */
  private readonly reading: Promise<unknown>[];
  private nextReadback = 0;
  private readonly tables: Record<PlanTable, Table>;
  readonly arenaWords: number;
  /** Submissions in call order (each may wait for a readback buffer). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly device: GPUDevice,
    readonly arena: GPUBuffer,
  ) {
    this.arenaWords = arena.size / 4;
    const make = (name: KernelName): GPUComputePipeline =>
      device.createComputePipeline({
        label: name,
        layout: 'auto',
        compute: {
          module: device.createShaderModule({ label: name, code: SHADERS[name] }),
          entryPoint: 'main',
          ...(name.startsWith('stream') ? { constants: { CHUNK_WORDS } } : {}),
        },
      });
    this.pipelines = {
      fill: make('fill'),
      touch: make('touch'),
      verify: make('verify'),
      streamWrite: make('streamWrite'),
      streamRead: make('streamRead'),
      streamCopy: make('streamCopy'),
    };
    this.counterBuffer = device.createBuffer({
      size: 16,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    this.readbacks = Array.from({ length: SUBMISSIONS_IN_FLIGHT }, () => device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
    this.reading = this.readbacks.map(() => Promise.resolve());
    this.tables = { freed: new Table(device), fill: new Table(device), touch: new Table(device), verify: new Table(device) };
  }

  /**
   * Submits the GPU work of up to BATCHES_PER_SUBMIT batches, in their order, as one submission;
   * resolves once submitted (waiting, when SUBMISSIONS_IN_FLIGHT submissions are in flight, for the
   * oldest one's counts), with a promise of the counts summed over them. (Wrapped in an object so
   * that awaiting the submission does not await the counts.)
   */
  submit(plans: readonly BatchPlan[]): Promise<{ result: Promise<BatchResult> }> {
    if (plans.length === 0 || plans.length > BATCHES_PER_SUBMIT) throw new RangeError(`a submission carries 1 to ${BATCHES_PER_SUBMIT} batches, not ${plans.length}`);
    const submitted = this.queue.then(async () => {
      const k = this.nextReadback;
      this.nextReadback = (k + 1) % SUBMISSIONS_IN_FLIGHT;
      await this.reading[k];
      const readback = this.readbacks[k]!;
      const groups = {
        freed: this.upload('freed', plans.map((p) => p.freed)),
        fill: this.upload('fill', plans.map((p) => p.fill)),
        touch: this.upload('touch', plans.map((p) => p.op)),
        verify: this.upload('verify', plans.map((p) => p.verify)),
      };
      const encoder = this.device.createCommandEncoder({ label: 'batches' });
      encoder.clearBuffer(this.counterBuffer);
      // One pass: WebGPU orders the dispatches' storage accesses within it as across passes.
      const pass = encoder.beginComputePass({ label: 'batches' });
      for (let b = 0; b < plans.length; b++) for (const t of PLAN_ORDER) this.encodeTable(pass, t, b, groups[t][b]!);
      pass.end();
      encoder.copyBufferToBuffer(this.counterBuffer, 0, readback, 0, 16);
      this.device.queue.submit([encoder.finish()]);
      const result = readCounters(readback).then((counts) => ({ verifyMismatches: counts[0]!, opMismatches: counts[1]! }));
      this.reading[k] = result.catch(() => undefined);
      return { result };
    });
    this.queue = submitted.catch(() => undefined);
    return submitted;
  }

  /** One kernel over a table, `repeat` times, in one submission (for benchmarks). */
  submitKernel(name: TableKernel, table: Uint32Array<ArrayBuffer>, repeat: number): Promise<undefined> {
    const [groups] = this.upload(name, [table]);
    const encoder = this.device.createCommandEncoder({ label: name });
    const pass = encoder.beginComputePass({ label: name });
    for (let r = 0; r < repeat; r++) this.encodeTable(pass, name, 0, groups!);
    pass.end();
    this.device.queue.submit([encoder.finish()]);
    return this.device.queue.onSubmittedWorkDone();
  }

  /** A plain streaming kernel over the whole arena (copy: its lower half onto the upper), `repeat`
   * times, in one submission. */
  submitStream(name: 'streamWrite' | 'streamRead' | 'streamCopy', repeat: number): Promise<undefined> {
    const words = name === 'streamCopy' ? Math.floor(this.arenaWords / 2) : this.arenaWords;
    const groups = Math.ceil(words / CHUNK_WORDS);
    const pipeline = this.pipelines[name];
    const params = this.device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.device.queue.writeBuffer(params, 0, new Uint32Array([groups, 0, 0, 0]));
    const entries: GPUBindGroupEntry[] = [
      { binding: 0, resource: { buffer: this.arena } },
      { binding: 2, resource: { buffer: params } },
    ];
    if (name === 'streamRead') entries.push({ binding: 3, resource: { buffer: this.counterBuffer } });
    const bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const encoder = this.device.createCommandEncoder({ label: name });
    // One pass, as the table kernels' (the comparison is of the kernels, not of pass overheads).
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    for (let r = 0; r < repeat; r++) dispatch(pass, groups);
    pass.end();
    this.device.queue.submit([encoder.finish()]);
    params.destroy(); // freed once the submitted work is done
    return this.device.queue.onSubmittedWorkDone();
  }

  /** The mismatch counters as they stand: [verify, op, plain read, unused] (benchmarks' self-check). */
  counters(): Promise<Uint32Array> {
    const read = this.queue.then(async () => {
      await Promise.all(this.reading);
      const readback = this.readbacks[0]!;
      const encoder = this.device.createCommandEncoder();
      encoder.copyBufferToBuffer(this.counterBuffer, 0, readback, 0, 16);
      this.device.queue.submit([encoder.finish()]);
      return readCounters(readback);
    });
    this.queue = read.catch(() => undefined);
    return read;
  }

  destroy(): void {
    for (const t of Object.values(this.tables)) t.destroy();
    this.counterBuffer.destroy();
    for (const b of this.readbacks) b.destroy();
  }

  /** Uploads a table's batches; returns each one's workgroups to dispatch. */
  private upload(name: PlanTable, tables: readonly Uint32Array[]): number[] {
    return this.tables[name].upload(tables, name === 'touch' ? OP_U32S : CHUNK_U32S);
  }

  /** Dispatches batch `slot`'s share of a table. */
  private encodeTable(pass: GPUComputePassEncoder, name: PlanTable, slot: number, groups: number): void {
    if (groups === 0) return;
    const table = this.tables[name];
    const pipeline = this.pipelines[PIPELINE[name]];
    let bindGroup = table.bindGroups[slot];
    if (!bindGroup) {
      const bindings: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: this.arena } },
        { binding: 1, resource: { buffer: table.entries! } },
        { binding: 2, resource: { buffer: table.params, offset: slot * PARAMS_STRIDE, size: 16 } },
        { binding: 4, resource: { buffer: table.groups! } },
      ];
      if (name !== 'fill') bindings.push({ binding: 3, resource: { buffer: this.counterBuffer } });
      bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: bindings });
      table.bindGroups[slot] = bindGroup;
    }
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    dispatch(pass, groups);
  }
}

async function readCounters(readback: GPUBuffer): Promise<Uint32Array> {
  await readback.mapAsync(GPUMapMode.READ);
  const counts = new Uint32Array(readback.getMappedRange().slice(0));
  readback.unmap();
  return counts;
}

function dispatch(pass: GPUComputePassEncoder, groups: number): void {
  const x = Math.min(groups, MAX_GROUPS_X);
  pass.dispatchWorkgroups(x, Math.ceil(groups / x));
}
