import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { deflateSync, inflateSync } from 'node:zlib';

// Packfiles: a snapshot's new objects written as one version-2 pack (with its index), and the reader for
// packs of our own (no deltas). Git's own packs (after `git gc`) are read through isomorphic-git.

/** Bytes a batch holds before it is flushed as one packfile (keeps every offset far below 2 GiB). */
export const PACK_FLUSH_BYTES = 256 * 1024 * 1024;

export type GitObjectType = 'blob' | 'tree' | 'commit';

const PACK_TYPES: Record<GitObjectType, number> = { commit: 1, tree: 2, blob: 3 };

/** Objects waiting to be written as one version-2 packfile with its version-2 index. */
export class PackBatch {
  readonly #entries: Array<{ oid: string; offset: number; crc: number }> = [];
  readonly #chunks: Buffer[] = [];
  readonly #seen = new Set<string>();
  bytes = 12;

  get count(): number {
    return this.#entries.length;
  }

  add(oid: string, type: GitObjectType, content: Uint8Array): void {
    if (this.#seen.has(oid)) return;
    this.#seen.add(oid);
    const header: number[] = [];
    let size = content.byteLength;
    let byte = (PACK_TYPES[type] << 4) | (size & 0x0f);
    size = Math.floor(size / 16);
    while (size > 0) {
      header.push(byte | 0x80);
      byte = size & 0x7f;
      size = Math.floor(size / 128);
    }
    header.push(byte);
    const record = Buffer.concat([Buffer.from(header), deflateSync(content, { level: 1 })]);
    this.#entries.push({ oid, offset: this.bytes, crc: crc32(record) });
    this.#chunks.push(record);
    this.bytes += record.length;
  }

  write(packDir: string): { packPath: string; idx: Buffer } {
    fs.mkdirSync(packDir, { recursive: true });
    const head = Buffer.alloc(12);
    head.write('PACK', 0, 'latin1');
    head.writeUInt32BE(2, 4);
    head.writeUInt32BE(this.#entries.length, 8);
    const packHash = createHash('sha1').update(head);
    for (const chunk of this.#chunks) packHash.update(chunk);
    const packSum = packHash.digest();
    const name = `pack-${packSum.toString('hex')}`;

    const sorted = [...this.#entries].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
    const fanout = Buffer.alloc(256 * 4);
    const counts = new Uint32Array(256);
    for (const entry of sorted) counts[parseInt(entry.oid.slice(0, 2), 16)]! += 1;
    let running = 0;
    for (let i = 0; i < 256; i += 1) {
      running += counts[i] as number;
      fanout.writeUInt32BE(running, i * 4);
    }
    const ids = Buffer.alloc(sorted.length * 20);
    const crcs = Buffer.alloc(sorted.length * 4);
    const offsets = Buffer.alloc(sorted.length * 4);
    sorted.forEach((entry, i) => {
      ids.write(entry.oid, i * 20, 'hex');
      crcs.writeUInt32BE(entry.crc, i * 4);
      offsets.writeUInt32BE(entry.offset, i * 4);
    });
    const idxBody = Buffer.concat([Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]), fanout, ids, crcs, offsets, packSum]);
    const idx = Buffer.concat([idxBody, createHash('sha1').update(idxBody).digest()]);

    const suffix = randomBytes(6).toString('hex');
    const packTemp = join(packDir, `tmp_pack_${suffix}`);
    fs.writeFileSync(packTemp, Buffer.concat([head, ...this.#chunks, packSum]), { mode: 0o444 });
    fs.renameSync(packTemp, join(packDir, `${name}.pack`));
    const idxTemp = join(packDir, `tmp_idx_${suffix}`);
    fs.writeFileSync(idxTemp, idx, { mode: 0o444 });
    fs.renameSync(idxTemp, join(packDir, `${name}.idx`));
    return { packPath: join(packDir, `${name}.pack`), idx };
  }
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (zlib's), from node:zlib when this Node has it. */
function crc32(data: Uint8Array): number {
  const native = (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32;
  if (typeof native === 'function') return native(data) >>> 0;
  if (crcTable === undefined) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n += 1) {
      let c = n;
      for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of data) crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const TYPE_NAMES: Record<number, string> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

/** A version-2 pack index, parsed once; reads whole (non-delta) objects from its pack. */
export class PackIndex {
  readonly #packPath: string;
  readonly #count: number;
  readonly #fanout: Uint32Array;
  readonly #ids: Buffer;
  readonly #offsets: number[];
  #sortedOffsets: number[] | undefined;
  #packEnd: number | undefined;

  constructor(packPath: string, idx: Buffer) {
    if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) throw new Error('unsupported pack index');
    this.#packPath = packPath;
    this.#fanout = new Uint32Array(256);
    for (let i = 0; i < 256; i += 1) this.#fanout[i] = idx.readUInt32BE(8 + i * 4);
    this.#count = this.#fanout[255] as number;
    const idsStart = 8 + 1024;
    this.#ids = idx.subarray(idsStart, idsStart + this.#count * 20);
    const offsetsStart = idsStart + this.#count * 24;
    const largeStart = offsetsStart + this.#count * 4;
    this.#offsets = new Array<number>(this.#count);
    for (let i = 0; i < this.#count; i += 1) {
      const raw = idx.readUInt32BE(offsetsStart + i * 4);
      this.#offsets[i] = raw & 0x80000000 ? Number(idx.readBigUInt64BE(largeStart + (raw & 0x7fffffff) * 8)) : raw;
    }
  }

  #find(oid: Buffer): number | undefined {
    const first = oid[0] as number;
    let low = first === 0 ? 0 : (this.#fanout[first - 1] as number);
    let high = (this.#fanout[first] as number) - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const cmp = Buffer.compare(this.#ids.subarray(mid * 20, mid * 20 + 20), oid);
      if (cmp === 0) return mid;
      if (cmp < 0) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }

  /** Every object id the pack holds (hex). */
  *oids(): Iterable<string> {
    for (let i = 0; i < this.#count; i += 1) yield this.#ids.subarray(i * 20, i * 20 + 20).toString('hex');
  }

  /** The object, `'delta'` when it is stored as a delta (not handled here), undefined when absent. */
  read(oid: Buffer): { type: string; content: Buffer } | 'delta' | undefined {
    const index = this.#find(oid);
    if (index === undefined) return undefined;
    const offset = this.#offsets[index] as number;
    this.#sortedOffsets ??= [...this.#offsets].sort((a, b) => a - b);
    this.#packEnd ??= fs.statSync(this.#packPath).size - 20;
    const sorted = this.#sortedOffsets;
    let lo = 0;
    let hi = sorted.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as number) <= offset) lo = mid + 1;
      else hi = mid;
    }
    const end = (sorted[lo] as number) > offset ? (sorted[lo] as number) : this.#packEnd;
    const data = Buffer.alloc(end - offset);
    const fd = fs.openSync(this.#packPath, 'r');
    try {
      fs.readSync(fd, data, 0, data.length, offset);
    } finally {
      fs.closeSync(fd);
    }
    let byte = data[0] as number;
    const type = (byte >> 4) & 7;
    let pos = 1;
    while (byte & 0x80) byte = data[pos++] as number;
    const name = TYPE_NAMES[type];
    if (name === undefined) return 'delta';
    return { type: name, content: inflateSync(data.subarray(pos)) };
  }
}
