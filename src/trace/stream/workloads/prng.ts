// A small seeded PRNG for the workload generators: the same seed gives the same stream on every
// platform (sfc32 uses only 32-bit integer ops, so no engine-specific float drift creeps in).

/** sfc32 (Chris Doty-Humphrey's Small Fast Counter), seeded through splitmix32. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  /** A second normal deviate from the last Box-Muller pair. */
  private spare: number | null = null;

  constructor(seed: number) {
    // splitmix32 spreads a small integer seed over all 128 bits of state.
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    // The first outputs of sfc32 are weakly mixed; discard a few.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** Uniform integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Log-uniform in [lo, hi): every factor of two between them is equally likely. */
  logUniform(lo: number, hi: number): number {
    return lo * Math.exp(Math.log(hi / lo) * this.next());
  }

  /** Standard normal deviate (Box-Muller; the pair's second value is kept for the next call). */
  normal(): number {
    if (this.spare !== null) {
      const v = this.spare;
      this.spare = null;
      return v;
    }
    const u = 1 - this.next(); // (0, 1]: log(u) is finite
    const r = Math.sqrt(-2 * Math.log(u));
    const theta = 2 * Math.PI * this.next();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }

  /** Gamma(shape, 1) deviate (Marsaglia-Tsang); shape < 1 uses the u^(1/shape) boost. */
  gamma(shape: number): number {
    if (shape < 1) return this.gamma(shape + 1) * Math.pow(1 - this.next(), 1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = 1 - this.next();
      if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
    }
  }

  /** Proportions drawn from a symmetric Dirichlet(alpha) over n parts; they sum to 1. */
  dirichlet(n: number, alpha: number): number[] {
    const g = Array.from({ length: n }, () => this.gamma(alpha));
    const sum = g.reduce((s, x) => s + x, 0);
    // All parts can underflow to 0 for a tiny alpha: fall back to one part taking everything.
    if (!(sum > 0)) return g.map((_, i) => (i === 0 ? 1 : 0));
    return g.map((x) => x / sum);
  }
}
