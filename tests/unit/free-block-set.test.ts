// The chunked free-block set against a plain sorted array, over random operations (chunks split and empty).
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { Block } from '../../src/allocator/block';
import { FreeBlockSet } from '../../src/allocator/free-block-set';

const order = (a: Block, b: Block) => a.stream - b.stream || a.size - b.size || a.addr - b.addr;

test('FreeBlockSet orders by (stream, size, address) and finds bounds like std::set', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          op: fc.constantFrom('insert', 'insert', 'delete', 'lowerBound', 'lastBefore', 'previous', 'shrinkFront', 'split', 'replace'),
          stream: fc.integer({ min: 0, max: 2 }),
          size: fc.integer({ min: 1, max: 40 }),
          pick: fc.nat(),
        }),
        { maxLength: 2000, size: 'large' },
      ),
      (ops) => {
        const set = new FreeBlockSet(3); // tiny chunks: splits and empty chunks happen all the time
        const model: Block[] = [];
        let addr = 0;
        for (const o of ops) {
          if (o.op === 'insert') {
            const b = new Block(addr++, o.size * 512, o.stream, false, null);
            set.insert(b);
            model.push(b);
            model.sort(order);
          } else if (o.op === 'delete' && model.length) {
            const [b] = model.splice(o.pick % model.length, 1);
            set.delete(b!);
          } else if (o.op === 'lowerBound') {
            const want = model.find((b) => b.stream > o.stream || (b.stream === o.stream && b.size >= o.size * 512));
            expect(set.lowerBound(o.stream, o.size * 512)).toBe(want);
          } else if (o.op === 'lastBefore') {
            const want = model.filter((b) => b.stream < o.stream || (b.stream === o.stream && b.size < o.size * 512)).pop();
            expect(set.lastBefore(o.stream, o.size * 512)).toBe(want);
          } else if ((o.op === 'shrinkFront' || o.op === 'split') && model.length) {
            // 'split' takes what a lowerBound just found, as the allocator does; 'shrinkFront' any block.
            const b = o.op === 'split' ? set.lowerBound(o.stream, o.size * 512) : model[o.pick % model.length];
            if (b && b.size > 512) {
              set.shrinkFront(b, (1 + (o.pick % (b.size / 512 - 1))) * 512);
              model.sort(order);
            }
          } else if (o.op === 'replace' && model.length) {
            const i = o.pick % model.length;
            const old = model[i]!;
            const b = new Block(addr++, old.size + o.size * 512, old.stream, false, null);
            set.replace(old, b);
            model.splice(i, 1, b);
            model.sort(order);
          } else if (o.op === 'previous' && model.length) {
            const i = o.pick % model.length;
            expect(set.previous(model[i]!)).toBe(i > 0 ? model[i - 1] : undefined);
          }
          expect(set.size).toBe(model.length);
          expect(set.largest()).toBe(Math.max(0, ...model.map((b) => b.size)));
        }
        expect(set.toArray()).toEqual(model);
      },
    ),
    { numRuns: 60 },
  );
});
