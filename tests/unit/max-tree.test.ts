// The max tree against a plain array of slots: the highest slot reaching a bound, through growth and clears.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { MaxTree } from '../../src/lib/max-tree';

test('MaxTree finds the highest slot whose value reaches a bound, as a scan of the slots does', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          op: fc.constantFrom('set', 'set', 'set', 'unset', 'query', 'clear'),
          slot: fc.integer({ min: 0, max: 300 }),
          value: fc.integer({ min: 0, max: 50 }),
        }),
        { maxLength: 500 },
      ),
      (ops) => {
        const tree = new MaxTree();
        let model: number[] = [];
        const scan = (bound: number): number => {
          for (let i = model.length - 1; i >= 0; i--) if (model[i]! >= bound) return i;
          return -1;
        };
        for (const o of ops) {
          if (o.op === 'set' || o.op === 'unset') {
            const value = o.op === 'set' ? o.value : -Infinity;
            tree.set(o.slot, value);
            while (model.length <= o.slot) model.push(-Infinity);
            model[o.slot] = value;
          } else if (o.op === 'clear') {
            tree.clear();
            model = [];
          }
          expect(tree.lastAtLeast(o.value)).toBe(scan(o.value));
        }
      },
    ),
    { numRuns: 100 },
  );
});
