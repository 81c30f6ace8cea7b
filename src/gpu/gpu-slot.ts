// The page's GPU: one arena, acquired when first needed, shared by successive stress runs, and
// replaced after a device loss (or a change of arena size).
import { GpuArena } from './stress/gpu-arena';
import type { GpuUnavailable } from './gpu-context';

/** The page's GPU, shared by successive runs: acquired once, replaced after a loss. */
export class GpuSlot {
  arena: GpuArena | null = null;
  unavailable: string | null = null;
  losses = 0;
  lastError: string | null = null;
  private opening: Promise<void> | null = null;
  private lost = false;
  /** Arenas this slot destroyed itself: their devices' loss is no loss. */
  private readonly retired = new WeakSet<GpuArena>();

  constructor(private arenaBytes?: number) {}

  /** The arena size the next get() opens; a different one retires the current arena. */
  setArenaBytes(bytes: number | undefined): void {
    if (bytes === this.arenaBytes) return;
    this.arenaBytes = bytes;
    this.unavailable = null;
    this.retire();
  }

  /** The arena, (re)acquired if there is none or the device was lost; null without a usable GPU. */
  async get(): Promise<GpuArena | null> {
    // Open once; after a refusal (no adapter) do not ask again, after a loss always do.
    if ((!this.arena && this.unavailable === null) || this.lost) {
      this.opening ??= this.open().finally(() => (this.opening = null));
      await this.opening;
    }
    return this.arena;
  }

  /** The device failed a batch: the next get() replaces it. */
  invalidate(message: string): void {
    this.lastError = message;
    if (!this.lost) this.losses++;
    this.lost = true;
  }

  /** Test-only: loses the device as a driver reset would (the next get() replaces it). */
  simulateLoss(): void {
    this.arena?.context.device.destroy();
  }

  /** Destroys the arena on purpose: its device's loss is no loss. */
  private retire(): void {
    if (!this.arena) return;
    this.retired.add(this.arena);
    this.arena.destroy();
    this.arena = null;
  }

  private async open(): Promise<void> {
    if (!this.lost) this.retire();
    this.arena = null;
    this.lost = false;
    let opened: GpuArena | null = null;
    const result: GpuArena | GpuUnavailable = await GpuArena.open(
      {
        lost: () => {
          if (opened && this.retired.has(opened)) return;
          this.losses++;
          this.lost = true;
        },
        error: (message) => (this.lastError = message),
      },
      this.arenaBytes,
    );
    if (result instanceof GpuArena) this.arena = opened = result;
    else this.unavailable = result.reason;
  }
}
