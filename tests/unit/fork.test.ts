// fork(): a deep copy that keeps classes, identity and cycles, and leaves shared objects as they are.
import { expect, test } from 'vitest';
import { Block, BLOCK_COPIER, Segment, SEGMENT_COPIER } from '../../src/allocator/block';
import { constructedCopier, fork, type Copier } from '../../src/lib/fork';

class Node {
  next: Node | null = null;
  constructor(public value: number) {}
  sum(): number {
    let s = 0;
    for (let n: Node | null = this; n; n = n.next) s += n.value;
    return s;
  }
}

test('a long linked list is copied node by node, methods and all, without touching the original', () => {
  const head = new Node(0);
  let tail = head;
  for (let i = 1; i < 200_000; i++) tail = tail.next = new Node(i);
  const copy = fork(head);
  // (Booleans: vitest would walk a 200,000-node chain to print it.)
  expect(copy instanceof Node).toBe(true);
  expect(copy === head).toBe(false);
  expect(copy.sum()).toBe(head.sum());
  copy.next!.value = -1;
  expect(head.next!.value).toBe(1);
});

test('an object reached twice is copied once; cycles, Maps, Sets and typed arrays come along; shared and frozen ones stay', () => {
  const shared = { big: new Float64Array(4) };
  const frozen = Object.freeze({ k: 1 });
  const a: Record<string, unknown> = { n: 1 };
  a.self = a;
  const root = { a, again: a, map: new Map([[a, new Set([a])]]), arr: [a, new Int32Array([1, 2])], shared, frozen };
  const c = fork(root, new Set([shared]));
  expect(c.a).not.toBe(a);
  expect(c.again).toBe(c.a);
  expect((c.a as Record<string, unknown>).self).toBe(c.a);
  const [key, set] = [...c.map][0]!;
  expect(key).toBe(c.a);
  expect([...set!][0]).toBe(c.a);
  expect(c.arr[1]).toEqual(new Int32Array([1, 2]));
  expect(c.arr[1]).not.toBe(root.arr[1]);
  expect(c.shared).toBe(shared);
  expect(c.frozen).toBe(frozen);
});

test("the allocator's copiers copy every field a block and a segment have", () => {
  const segment = new Segment(1 << 30, 20 << 20, 7, true, null as unknown as Block, 2 << 20, 3); // no field at its blank value
  const block = new Block(1 << 30, 1 << 20, 7, true, segment);
  const next = new Block((1 << 30) + (1 << 20), 19 << 20, 7, false, segment);
  segment.head = block;
  block.next = next;
  next.prev = block;
  Object.assign(block, { tag: 11, requestedSize: 999, allocated: true, pending: true, mapped: false, gcCountBase: 5 });
  const copiers = new Map<object, Copier>([
    [Block.prototype, BLOCK_COPIER as unknown as Copier],
    [Segment.prototype, SEGMENT_COPIER as unknown as Copier],
  ]);
  const c = fork(block, new Set(), copiers);
  for (const [copy, original] of [[c, block], [c.segment, segment]] as [object, object][]) {
    expect(Object.keys(copy)).toEqual(Object.keys(original)); // a field the copier forgets stays at its blank value
    for (const [k, v] of Object.entries(original)) {
      if (typeof v === 'object' && v !== null) expect([k, (copy as Record<string, unknown>)[k] !== v]).toEqual([k, true]);
      else expect([k, (copy as Record<string, unknown>)[k]]).toEqual([k, v]);
    }
  }
  expect(c.next!.prev).toBe(c);
  expect(c.segment.head).toBe(c);
});

test('a constructed copier copies onto a blank its constructor makes, every field by name', () => {
  let made = 0;
  class Pool {
    count = 0;
    readonly items: Node[] = [];
    constructor(public label = 'blank') {
      made++;
    }
  }
  const pool = new Pool('kept');
  pool.count = 3;
  pool.items.push(new Node(1), new Node(2));
  const c = fork(pool, new Set(), new Map<object, Copier>([[Pool.prototype, constructedCopier(() => new Pool())]]));
  expect(made).toBe(2); // the original and the copy's blank
  expect(c instanceof Pool).toBe(true);
  expect(Object.keys(c)).toEqual(Object.keys(pool));
  expect([c.label, c.count, c.items.map((n) => n.value)]).toEqual(['kept', 3, [1, 2]]);
  expect(c.items).not.toBe(pool.items);
  expect(c.items[0]).not.toBe(pool.items[0]);
});
