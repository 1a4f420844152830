/**
 * An immutable string-keyed map (a hash array mapped trie). `set` and `delete` return a new map that
 * shares every untouched node with the old one, so a directory with 100k children costs a handful of
 * small node copies to change, not a copy of 100k entries. `diff` walks two maps and skips every node the
 * two share, so its cost follows what changed between them.
 */

const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;
const MAX_SHIFT = 30;

interface Leaf<V> {
  readonly kind: 'leaf';
  readonly hash: number;
  readonly key: string;
  readonly value: V;
}

interface Branch<V> {
  readonly kind: 'branch';
  /** Bit i set when slot i holds an entry; entries are packed in slot order. */
  readonly bitmap: number;
  readonly entries: readonly Node<V>[];
}

/** Keys whose 32-bit hashes are all equal. */
interface Collision<V> {
  readonly kind: 'collision';
  readonly hash: number;
  readonly leaves: readonly Leaf<V>[];
}

type Node<V> = Leaf<V> | Branch<V> | Collision<V>;

function hashString(key: string): number {
  // FNV-1a over UTF-16 code units, then a final avalanche so that similar names spread over the slots.
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

function slotOf(hash: number, shift: number): number {
  return (hash >>> shift) & MASK;
}

function indexOf(bitmap: number, bit: number): number {
  return popcount(bitmap & (bit - 1));
}

const EMPTY_BRANCH: Branch<never> = Object.freeze({ kind: 'branch', bitmap: 0, entries: Object.freeze([]) }) as Branch<never>;

function getNode<V>(node: Node<V>, hash: number, key: string, shift: number): V | undefined {
  for (;;) {
    if (node.kind === 'leaf') return node.key === key ? node.value : undefined;
    if (node.kind === 'collision') return node.hash === hash ? node.leaves.find((l) => l.key === key)?.value : undefined;
    const bit = 1 << slotOf(hash, shift);
    if ((node.bitmap & bit) === 0) return undefined;
    node = node.entries[indexOf(node.bitmap, bit)] as Node<V>;
    shift += BITS;
  }
}

/** Two leaves with different keys, merged into the smallest subtree that separates them. */
function mergeLeaves<V>(a: Leaf<V>, b: Leaf<V>, shift: number): Node<V> {
  if (a.hash === b.hash || shift > MAX_SHIFT) return { kind: 'collision', hash: a.hash, leaves: [a, b] };
  const slotA = slotOf(a.hash, shift);
  const slotB = slotOf(b.hash, shift);
  if (slotA === slotB) return { kind: 'branch', bitmap: 1 << slotA, entries: [mergeLeaves(a, b, shift + BITS)] };
  return { kind: 'branch', bitmap: (1 << slotA) | (1 << slotB), entries: slotA < slotB ? [a, b] : [b, a] };
}

/** Returns the same node when nothing changed; `added` reports whether the key is new. */
function setNode<V>(node: Node<V>, leaf: Leaf<V>, shift: number, added: { value: boolean }): Node<V> {
  if (node.kind === 'leaf') {
    if (node.key === leaf.key) return node.value === leaf.value ? node : leaf;
    added.value = true;
    return mergeLeaves(node, leaf, shift);
  }
  if (node.kind === 'collision') {
    if (node.hash !== leaf.hash) {
      // Push the collision one level down next to the new leaf.
      const branch: Branch<V> = { kind: 'branch', bitmap: 1 << slotOf(node.hash, shift), entries: [node] };
      return setNode(branch, leaf, shift, added);
    }
    const at = node.leaves.findIndex((l) => l.key === leaf.key);
    if (at === -1) {
      added.value = true;
      return { kind: 'collision', hash: node.hash, leaves: [...node.leaves, leaf] };
    }
    if ((node.leaves[at] as Leaf<V>).value === leaf.value) return node;
    const leaves = node.leaves.slice();
    leaves[at] = leaf;
    return { kind: 'collision', hash: node.hash, leaves };
  }
  const bit = 1 << slotOf(leaf.hash, shift);
  const index = indexOf(node.bitmap, bit);
  if ((node.bitmap & bit) === 0) {
    added.value = true;
    const entries = node.entries.slice();
    entries.splice(index, 0, leaf);
    return { kind: 'branch', bitmap: node.bitmap | bit, entries };
  }
  const child = node.entries[index] as Node<V>;
  const updated = setNode(child, leaf, shift + BITS, added);
  if (updated === child) return node;
  const entries = node.entries.slice();
  entries[index] = updated;
  return { kind: 'branch', bitmap: node.bitmap, entries };
}

/**
 * `setNode` for one of many keys set together: a branch in `fresh` was made by this same batch and is seen
 * by nobody else yet, so it is changed in place rather than copied again. Every node made here goes in `fresh`.
 */
function setNodeInBatch<V>(node: Node<V>, leaf: Leaf<V>, shift: number, added: { value: boolean }, fresh: Set<Node<V>>): Node<V> {
  if (node.kind !== 'branch') {
    const result = setNode(node, leaf, shift, added);
    if (result !== node) fresh.add(result);
    return result;
  }
  const bit = 1 << slotOf(leaf.hash, shift);
  const index = indexOf(node.bitmap, bit);
  const owned = fresh.has(node);
  if ((node.bitmap & bit) === 0) {
    added.value = true;
    if (owned) {
      (node.entries as Node<V>[]).splice(index, 0, leaf);
      (node as { bitmap: number }).bitmap |= bit;
      return node;
    }
    const entries = node.entries.slice();
    entries.splice(index, 0, leaf);
    return made(fresh, { kind: 'branch', bitmap: node.bitmap | bit, entries });
  }
  const child = node.entries[index] as Node<V>;
  const updated = setNodeInBatch(child, leaf, shift + BITS, added, fresh);
  if (updated === child) return node;
  if (owned) {
    (node.entries as Node<V>[])[index] = updated;
    return node;
  }
  const entries = node.entries.slice();
  entries[index] = updated;
  return made(fresh, { kind: 'branch', bitmap: node.bitmap, entries });
}

function made<V>(fresh: Set<Node<V>>, node: Node<V>): Node<V> {
  fresh.add(node);
  return node;
}

/** Returns the same node when the key is absent, `undefined` when the node becomes empty. */
function deleteNode<V>(node: Node<V>, hash: number, key: string, shift: number): Node<V> | undefined {
  if (node.kind === 'leaf') return node.key === key ? undefined : node;
  if (node.kind === 'collision') {
    if (node.hash !== hash) return node;
    const leaves = node.leaves.filter((l) => l.key !== key);
    if (leaves.length === node.leaves.length) return node;
    return leaves.length === 1 ? leaves[0] : { kind: 'collision', hash, leaves };
  }
  const bit = 1 << slotOf(hash, shift);
  if ((node.bitmap & bit) === 0) return node;
  const index = indexOf(node.bitmap, bit);
  const child = node.entries[index] as Node<V>;
  const updated = deleteNode(child, hash, key, shift + BITS);
  if (updated === child) return node;
  if (updated === undefined) {
    const bitmap = node.bitmap & ~bit;
    if (bitmap === 0) return undefined;
    const entries = node.entries.slice();
    entries.splice(index, 1);
    // A branch left with a single leaf collapses into it, keeping the trie canonical for diff.
    if (entries.length === 1 && (entries[0] as Node<V>).kind !== 'branch' && shift > 0) return entries[0];
    return { kind: 'branch', bitmap, entries };
  }
  if (node.entries.length === 1 && updated.kind !== 'branch' && shift > 0) return updated;
  const entries = node.entries.slice();
  entries[index] = updated;
  return { kind: 'branch', bitmap: node.bitmap, entries };
}

function* leavesOf<V>(node: Node<V>): Generator<Leaf<V>> {
  if (node.kind === 'leaf') yield node;
  else if (node.kind === 'collision') yield* node.leaves;
  else for (const entry of node.entries) yield* leavesOf(entry);
}

export type DiffCallback<V> = (key: string, before: V | undefined, after: V | undefined) => void;

function diffNodes<V>(a: Node<V> | undefined, b: Node<V> | undefined, shift: number, onChange: DiffCallback<V>): void {
  if (a === b) return;
  if (a === undefined) {
    for (const leaf of leavesOf(b as Node<V>)) onChange(leaf.key, undefined, leaf.value);
    return;
  }
  if (b === undefined) {
    for (const leaf of leavesOf(a)) onChange(leaf.key, leaf.value, undefined);
    return;
  }
  if (a.kind === 'branch' && b.kind === 'branch') {
    const union = a.bitmap | b.bitmap;
    for (let slot = 0; slot < WIDTH; slot += 1) {
      const bit = 1 << slot;
      if ((union & bit) === 0) continue;
      const childA = (a.bitmap & bit) === 0 ? undefined : a.entries[indexOf(a.bitmap, bit)];
      const childB = (b.bitmap & bit) === 0 ? undefined : b.entries[indexOf(b.bitmap, bit)];
      diffNodes(childA, childB, shift + BITS, onChange);
    }
    return;
  }
  // A leaf or collision against anything: the subtrees are small, compare their leaves directly.
  const before = new Map<string, V>();
  for (const leaf of leavesOf(a)) before.set(leaf.key, leaf.value);
  for (const leaf of leavesOf(b)) {
    if (!before.has(leaf.key)) onChange(leaf.key, undefined, leaf.value);
    else {
      const old = before.get(leaf.key) as V;
      if (old !== leaf.value) onChange(leaf.key, old, leaf.value);
      before.delete(leaf.key);
    }
  }
  for (const [key, value] of before) onChange(key, value, undefined);
}

export class PersistentMap<V> {
  static readonly #empty = new PersistentMap<never>(EMPTY_BRANCH, 0);

  readonly #root: Node<V>;
  readonly size: number;

  private constructor(root: Node<V>, size: number) {
    this.#root = root;
    this.size = size;
  }

  static empty<V>(): PersistentMap<V> {
    return PersistentMap.#empty as PersistentMap<V>;
  }

  get(key: string): V | undefined {
    return getNode(this.#root, hashString(key), key, 0);
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** A map with `key` set; this same map when the value is already there. */
  set(key: string, value: V): PersistentMap<V> {
    const added = { value: false };
    const root = setNode(this.#root, { kind: 'leaf', hash: hashString(key), key, value }, 0, added);
    if (root === this.#root) return this;
    return new PersistentMap(root, this.size + (added.value ? 1 : 0));
  }

  /**
   * A map with every pair set, in order (a later pair for the same key wins): what as many `set` calls
   * give, each trie node on the way copied once for the batch rather than once per key.
   */
  setAll(pairs: Iterable<readonly [string, V]>): PersistentMap<V> {
    const fresh = new Set<Node<V>>();
    const added = { value: false };
    let root = this.#root;
    let size = this.size;
    for (const [key, value] of pairs) {
      added.value = false;
      root = setNodeInBatch(root, { kind: 'leaf', hash: hashString(key), key, value }, 0, added, fresh);
      if (added.value) size += 1;
    }
    return root === this.#root ? this : new PersistentMap(root, size);
  }

  /** A map without `key`; this same map when it was absent. */
  delete(key: string): PersistentMap<V> {
    const root = deleteNode(this.#root, hashString(key), key, 0);
    if (root === this.#root) return this;
    return root === undefined ? PersistentMap.empty() : new PersistentMap(root, this.size - 1);
  }

  *entries(): Generator<[string, V]> {
    for (const leaf of leavesOf(this.#root)) yield [leaf.key, leaf.value];
  }

  *keys(): Generator<string> {
    for (const leaf of leavesOf(this.#root)) yield leaf.key;
  }

  /** Calls `onChange` for every key whose value differs (by identity) between `before` and `after`. */
  static diff<V>(before: PersistentMap<V>, after: PersistentMap<V>, onChange: DiffCallback<V>): void {
    diffNodes(before.#root, after.#root, 0, onChange);
  }
}
