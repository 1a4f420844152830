import { describe, expect, it } from 'vitest';
import { PersistentMap } from '../../src/snapshots/persistent-map.js';

describe('PersistentMap', () => {
  it('stores, replaces and deletes keys without touching earlier versions', () => {
    const empty = PersistentMap.empty<number>();
    const one = empty.set('a', 1);
    const two = one.set('b', 2);
    const replaced = two.set('a', 10);
    const removed = replaced.delete('b');
    expect([empty.size, one.size, two.size, replaced.size, removed.size]).toEqual([0, 1, 2, 2, 1]);
    expect(two.get('a')).toBe(1);
    expect(replaced.get('a')).toBe(10);
    expect(removed.get('b')).toBeUndefined();
    expect(two.get('b')).toBe(2);
  });

  it('returns the same map when nothing changes', () => {
    const map = PersistentMap.empty<number>().set('a', 1);
    expect(map.set('a', 1)).toBe(map);
    expect(map.delete('missing')).toBe(map);
  });

  it('agrees with a Map over many random operations, including deep and colliding slots', () => {
    let persistent = PersistentMap.empty<number>();
    const reference = new Map<string, number>();
    let seed = 42;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % 5000;
    for (let i = 0; i < 20000; i += 1) {
      const key = `k${random()}`;
      if (random() % 3 === 0) {
        persistent = persistent.delete(key);
        reference.delete(key);
      } else {
        persistent = persistent.set(key, i);
        reference.set(key, i);
      }
    }
    expect(persistent.size).toBe(reference.size);
    expect(new Map(persistent.entries())).toEqual(reference);
    for (const [key, value] of reference) expect(persistent.get(key)).toBe(value);
  });

  it('diffs two versions, reporting exactly the keys that changed', () => {
    let base = PersistentMap.empty<number>();
    for (let i = 0; i < 5000; i += 1) base = base.set(`file-${i}`, i);
    const changed = base.set('file-10', -1).delete('file-20').set('new', 7);
    const seen: [string, number | undefined, number | undefined][] = [];
    PersistentMap.diff(base, changed, (key, before, after) => seen.push([key, before, after]));
    expect(seen.sort()).toEqual([
      ['file-10', 10, -1],
      ['file-20', 20, undefined],
      ['new', undefined, 7],
    ]);
    const none: string[] = [];
    PersistentMap.diff(changed, changed, (key) => none.push(key));
    expect(none).toEqual([]);
  });

  it('sets a batch (setAll) as many set calls would, leaving the map it started from as it was', () => {
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % 3000;
    let base = PersistentMap.empty<number>();
    for (let i = 0; i < 2000; i += 1) base = base.set(`k${random()}`, i);
    const before = new Map(base.entries());
    for (const size of [1, 5, 40, 700, 4000]) {
      const pairs = Array.from({ length: size }, (_, i): [string, number] => [`k${random()}`, -i]);
      let oneByOne = base;
      for (const [key, value] of pairs) oneByOne = oneByOne.set(key, value);
      const batch = base.setAll(pairs);
      expect(batch.size).toBe(oneByOne.size);
      expect(new Map(batch.entries())).toEqual(new Map(oneByOne.entries()));
      const differences: string[] = [];
      PersistentMap.diff(oneByOne, batch, (key) => differences.push(key));
      expect(differences).toEqual([]);
      expect(new Map(base.entries())).toEqual(before);
    }
    expect(base.setAll([...before].slice(0, 50))).toBe(base);
  });
});
