// Runs batch plans on the GPU: verify, fill, op (touch) and verify again over span tables, and the plain
// streaming kernels the benchmark compares them with. One instance per device and arena buffer.
import { SPAN_U32S } from './block-spans';
import { SHADERS, type KernelName } from './shader-sources';
import { GROUP_U32S, GROUP_WORDS, workGroupsRoom, writeWorkGroups } from './work-groups';
import { OP_U32S, type BatchPlan } from './stress-run';

type TableKernel = 'fill' | 'touch' | 'verify';

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

/**
 * A submission's dispatches, each at a fixed slot (its parameters' place in the uniform buffer, and
 * its bind group, kept while the buffers stay): slot 0 verifies batch 0's freed blocks; then each
 * batch b has fill, touch, and one verify of its sweep's share followed by batch b + 1's freed
 * blocks (two reads in a row, one dispatch; WebGPU calls cost microseconds each under Dawn).
 */
const SLOTS = 1 + 3 * BATCHES_PER_SUBMIT;
const SLOT_KERNELS: readonly TableKernel[] = Array.from({ length: SLOTS }, (_, i) => (i === 0 ? 'verify' : (['fill', 'touch', 'verify'] as const)[(i - 1) % 3]!));

/** Bytes between the dispatches' parameters in the uniform buffer (WebGPU's default offset alignment). */
const PARAMS_STRIDE = 256;

export interface BatchResult {
  /** Words of live blocks that did not hold their pattern at verify. */
  verifyMismatches: number;
  /** Input words the ops read that did not hold their pattern. */
  opMismatches: number;
}

/** A growable u32 array, reused from submission to submission (writeBuffer copies what it is given). */
class Staging {
  data = new Uint32Array(1024);
  length = 0;

  /** Makes room for `n` more u32s; returns the array to write them into. */
  room(n: number): Uint32Array {
    if (this.length + n > this.data.length) {
      const grown = new Uint32Array(2 * (this.length + n));
      grown.set(this.data.subarray(0, this.length));
      this.data = grown;
    }
    return this.data;
  }

  append(table: Uint32Array): void {
    this.room(table.length).set(table, this.length);
    this.length += table.length;
  }
}

/**
 * The tables of a submission: every verify and fill table in one buffer of spans, the op tables in
 * one of op entries, their workgroup shares in a third, and each dispatch's share count and first
 * share in its slot of the uniform buffer: four uploads a submission, whatever it holds.
 */
class SubmissionTables {
  spans: GPUBuffer | null = null;
  ops: GPUBuffer | null = null;
  groups: GPUBuffer | null = null;
  readonly params: GPUBuffer;
  /** Per slot (null: to make, after a buffer was replaced). */
  readonly bindGroups: (GPUBindGroup | null)[] = new Array<GPUBindGroup | null>(SLOTS).fill(null);
  /** Per slot, the workgroup shares staged for it (0: no dispatch). */
  readonly counts = new Uint32Array(SLOTS);
  private readonly staged = { spans: new Staging(), ops: new Staging(), groups: new Staging() };
  private readonly slots = new Uint32Array((SLOTS * PARAMS_STRIDE) / 4);

  constructor(private readonly device: GPUDevice) {
    this.params = device.createBuffer({ size: SLOTS * PARAMS_STRIDE, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  }

  clear(): void {
    this.staged.spans.length = 0;
    this.staged.ops.length = 0;
    this.staged.groups.length = 0;
    this.counts.fill(0);
  }

  /** Stages `tables`, end to end, as slot `slot`'s dispatch. */
  stage(slot: number, ...tables: (Uint32Array | undefined)[]): void {
    const touch = SLOT_KERNELS[slot] === 'touch';
    const entries = touch ? this.staged.ops : this.staged.spans;
    const stride = touch ? OP_U32S : SPAN_U32S;
    const groups = this.staged.groups;
    const firstGroup = groups.length / GROUP_U32S;
    for (const table of tables) {
      if (!table || table.length === 0) continue;
      const out = groups.room(workGroupsRoom(table, stride));
      groups.length = writeWorkGroups(table, stride, entries.length / stride, out, groups.length);
      entries.append(table);
    }
    const count = groups.length / GROUP_U32S - firstGroup;
    this.counts[slot] = count;
    this.slots[(slot * PARAMS_STRIDE) / 4] = count;
    this.slots[(slot * PARAMS_STRIDE) / 4 + 1] = firstGroup;
  }

  /** Uploads what is staged (queued behind the work already submitted). */
  upload(): void {
    const { spans, ops, groups } = this.staged;
    const spanBuffer = this.put(this.spans, spans);
    const opBuffer = this.put(this.ops, ops);
    const groupBuffer = this.put(this.groups, groups);
    // New buffers need new bind groups.
    if (spanBuffer !== this.spans || opBuffer !== this.ops || groupBuffer !== this.groups) this.bindGroups.fill(null);
    [this.spans, this.ops, this.groups] = [spanBuffer, opBuffer, groupBuffer];
    this.device.queue.writeBuffer(this.params, 0, this.slots);
  }

  destroy(): void {
    this.spans?.destroy();
    this.ops?.destroy();
    this.groups?.destroy();
    this.params.destroy();
  }

  /** Uploads `data` into `current`, or into a new buffer when it does not fit (destroying the old one). */
  private put(current: GPUBuffer | null, data: Staging): GPUBuffer {
    let buffer = current;
    const bytes = data.length * 4;
    if (!buffer || buffer.size < bytes) {
      buffer?.destroy();
      buffer = this.device.createBuffer({ size: Math.max(16, bytes, (buffer?.size ?? 0) * 2), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    }
    if (bytes > 0) this.device.queue.writeBuffer(buffer, 0, data.data, 0, data.length);
    return buffer;
  }
}

export class StressKernels {
  private readonly pipelines: Record<KernelName, GPUComputePipeline>;
  private readonly counterBuffer: GPUBuffer;
  private readonly readbacks: GPUBuffer[];
  /** Per readback buffer, its batch's counts being read (the buffer is free again once they are). */
  private readonly reading: Promise<unknown>[];
  private nextReadback = 0;
  private readonly tables: SubmissionTables;
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
          ...(name.startsWith('stream') ? { constants: { GROUP_WORDS } } : {}),
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
    this.tables = new SubmissionTables(device);
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
      const tables = this.tables;
      tables.clear();
      tables.stage(0, plans[0]!.freed);
      for (let b = 0; b < plans.length; b++) {
        const plan = plans[b]!;
        tables.stage(1 + 3 * b, plan.fill);
        tables.stage(2 + 3 * b, plan.op);
        tables.stage(3 + 3 * b, plan.verify, plans[b + 1]?.freed);
      }
      tables.upload();
      const encoder = this.device.createCommandEncoder({ label: 'batches' });
      encoder.clearBuffer(this.counterBuffer);
      // One pass: WebGPU orders the dispatches' storage accesses within it as across passes.
      const pass = encoder.beginComputePass({ label: 'batches' });
      let last: GPUComputePipeline | null = null;
      for (let slot = 0; slot <= 3 * plans.length; slot++) last = this.encodeSlot(pass, slot, last);
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
    const slot = SLOT_KERNELS.indexOf(name);
    this.tables.clear();
    this.tables.stage(slot, table);
    this.tables.upload();
    const encoder = this.device.createCommandEncoder({ label: name });
    const pass = encoder.beginComputePass({ label: name });
    let last: GPUComputePipeline | null = null;
    for (let r = 0; r < repeat; r++) last = this.encodeSlot(pass, slot, last);
    pass.end();
    this.device.queue.submit([encoder.finish()]);
    return this.device.queue.onSubmittedWorkDone();
  }

  /** A plain streaming kernel over the whole arena (copy: its lower half onto the upper), `repeat`
   * times, in one submission. */
  submitStream(name: 'streamWrite' | 'streamRead' | 'streamCopy', repeat: number): Promise<undefined> {
    const words = name === 'streamCopy' ? Math.floor(this.arenaWords / 2) : this.arenaWords;
    const groups = Math.ceil(words / GROUP_WORDS);
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
    this.tables.destroy();
    this.counterBuffer.destroy();
    for (const b of this.readbacks) b.destroy();
  }

  /** Dispatches slot `slot`'s staged shares, if any; returns the pipeline set now (`last`: the one set before). */
  private encodeSlot(pass: GPUComputePassEncoder, slot: number, last: GPUComputePipeline | null): GPUComputePipeline | null {
    const tables = this.tables;
    const groups = tables.counts[slot]!;
    if (groups === 0) return last;
    const kernel = SLOT_KERNELS[slot]!;
    const pipeline = this.pipelines[kernel];
    let bindGroup = tables.bindGroups[slot];
    if (!bindGroup) {
      const bindings: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: this.arena } },
        { binding: 1, resource: { buffer: kernel === 'touch' ? tables.ops! : tables.spans! } },
        { binding: 2, resource: { buffer: tables.params, offset: slot * PARAMS_STRIDE, size: 16 } },
        { binding: 4, resource: { buffer: tables.groups! } },
      ];
      if (kernel !== 'fill') bindings.push({ binding: 3, resource: { buffer: this.counterBuffer } });
      bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: bindings });
      tables.bindGroups[slot] = bindGroup;
    }
    if (pipeline !== last) pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    dispatch(pass, groups);
    return pipeline;
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
