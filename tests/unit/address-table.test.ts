// AddressTable against a Map, over random sets, gets and deletes (long probe runs included).
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { AddressTable } from '../../src/lib/address-table';

test('AddressTable behaves as a Map from addresses to ids', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          op: fc.constantFrom('set', 'set', 'get', 'delete'),
          // Few distinct addresses, far apart and near 2^47: collisions and reuse are common.
          addr: fc.integer({ min: 0, max: 200 }).map((k) => 2 ** 47 - k * 512 * 4096),
          value: fc.nat({ max: 1e6 }),
        }),
        { maxLength: 3000, size: 'large' },
      ),
      (ops) => {
        const table = new AddressTable(4);
        const model = new Map<number, number>();
        for (const o of ops) {
          if (o.op === 'set') {
            table.set(o.addr, o.value);
            model.set(o.addr, o.value);
          } else if (o.op === 'delete') {
            expect(table.delete(o.addr)).toBe(model.delete(o.addr));
          }
          expect(table.get(o.addr)).toBe(model.get(o.addr) ?? -1);
        }
        for (const [k, v] of model) expect(table.get(k)).toBe(v);
      },
    ),
    { numRuns: 40 },
  );
});
