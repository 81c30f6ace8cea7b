// Runs batch plans on the GPU: fill, op (touch) and verify over chunk tables, and the plain
// streaming kernels the benchmark compares them with. One instance per device and arena buffer.
import { CHUNK_U32S, CHUNK_WORDS } from './block-chunks';
import { SHADERS, type KernelName } from './shader-sources';
import { workGroups } from './work-groups';
import { OP_U32S, type BatchPlan } from './stress-run';

type TableKernel = 'fill' | 'touch' | 'verify';

/** Per-dimension workgroup limit of WebGPU's defaults. */
const MAX_GROUPS_X = 65535;

/**
 * Batches in flight at once. Each has its own readback buffer; the tables and the counters are
 * rewritten in queue order (writeBuffer runs after the work submitted before it), so the next batch
 * can be encoded while the GPU still runs the last one and its counts are on their way back.
 */
export const BATCHES_IN_FLIGHT = 3;

export interface BatchResult {
  /** Words of live blocks that did not hold their pattern at verify. */
  verifyMismatches: number;
  /** Input words the ops read that did not hold their pattern. */
  opMismatches: number;
}

/** Uploads `data` into `current`, or into a new buffer when it does not fit (destroying the old one). */
function upload(device: GPUDevice, current: GPUBuffer | null, data: Uint32Array<ArrayBuffer>): GPUBuffer {
  let buffer = current;
  if (!buffer || buffer.size < data.byteLength) {
    buffer?.destroy();
    buffer = device.createBuffer({
      size: Math.max(16, data.byteLength, (buffer?.size ?? 0) * 2),
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
    });
  }
  if (data.byteLength > 0) device.queue.writeBuffer(buffer, 0, data);
  return buffer;
}

/** One kernel's table and its workgroup shares, in buffers grown on demand, with the group count. */
class Table {
  entries: GPUBuffer | null = null;
  groups: GPUBuffer | null = null;
  readonly params: GPUBuffer;
  bindGroup: GPUBindGroup | null = null;

  constructor(private readonly device: GPUDevice) {
    this.params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  }

  /** Uploads `data`; returns the number of groups (workgroups to dispatch). */
  upload(data: Uint32Array<ArrayBuffer>, stride: number): number {
    const groups = workGroups(data, stride);
    const [entries, shares] = [upload(this.device, this.entries, data), upload(this.device, this.groups, groups)];
    // New buffers need a new bind group.
    if (entries !== this.entries || shares !== this.groups) this.bindGroup = null;
    this.entries = entries;
    this.groups = shares;
    const count = groups.length / 2;
    this.device.queue.writeBuffer(this.params, 0, new Uint32Array([count, 0, 0, 0]));
    return count;
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
  private readonly tables: Record<TableKernel, Table>;
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
    this.readbacks = Array.from({ length: BATCHES_IN_FLIGHT }, () => device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
    this.reading = this.readbacks.map(() => Promise.resolve());
    this.tables = { fill: new Table(device), touch: new Table(device), verify: new Table(device) };
  }

  /**
   * Submits fill, op and verify for one batch; resolves once submitted (waiting, when
   * BATCHES_IN_FLIGHT batches are in flight, for the oldest one's counts), with a promise of this
   * batch's counts. (Wrapped in an object so that awaiting the submission does not await them.)
   */
  submit(plan: BatchPlan): Promise<{ result: Promise<BatchResult> }> {
    const submitted = this.queue.then(async () => {
      const k = this.nextReadback;
      this.nextReadback = (k + 1) % BATCHES_IN_FLIGHT;
      await this.reading[k];
      const readback = this.readbacks[k]!;
      const encoder = this.device.createCommandEncoder({ label: 'batch' });
      encoder.clearBuffer(this.counterBuffer);
      // One pass: WebGPU orders the dispatches' storage accesses within it as across passes.
      const pass = encoder.beginComputePass({ label: 'batch' });
      this.encodeTable(pass, 'fill', this.upload('fill', plan.fill));
      this.encodeTable(pass, 'touch', this.upload('touch', plan.op));
      this.encodeTable(pass, 'verify', this.upload('verify', plan.verify));
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
    const groups = this.upload(name, table);
    const encoder = this.device.createCommandEncoder({ label: name });
    const pass = encoder.beginComputePass({ label: name });
    for (let r = 0; r < repeat; r++) this.encodeTable(pass, name, groups);
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

  /** Uploads a kernel's table; returns the workgroups to dispatch over it. */
  private upload(name: TableKernel, data: Uint32Array<ArrayBuffer>): number {
    return data.length === 0 ? 0 : this.tables[name].upload(data, name === 'touch' ? OP_U32S : CHUNK_U32S);
  }

  private encodeTable(pass: GPUComputePassEncoder, name: TableKernel, groups: number): void {
    if (groups === 0) return;
    const table = this.tables[name];
    const pipeline = this.pipelines[name];
    if (!table.bindGroup) {
      const bindings: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: this.arena } },
        { binding: 1, resource: { buffer: table.entries! } },
        { binding: 2, resource: { buffer: table.params } },
        { binding: 4, resource: { buffer: table.groups! } },
      ];
      if (name !== 'fill') bindings.push({ binding: 3, resource: { buffer: this.counterBuffer } });
      table.bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: bindings });
    }
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, table.bindGroup);
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
