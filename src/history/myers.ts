/**
 * A shortest edit script between two sequences of line ids (Myers' O(ND) diff in linear space: the middle
 * snake, then both halves), reported as the pairs of equal lines it keeps. Each range first gives up its
 * common start and end, so an edit costs what the edited region costs.
 */
export function commonLines(a: Int32Array, b: Int32Array, keep: (aIndex: number, bIndex: number) => void): void {
  new Bisector(a, b, keep).diff(0, a.length, 0, b.length);
}

class Bisector {
  readonly #a: Int32Array;
  readonly #b: Int32Array;
  readonly #keep: (aIndex: number, bIndex: number) => void;

  constructor(a: Int32Array, b: Int32Array, keep: (aIndex: number, bIndex: number) => void) {
    this.#a = a;
    this.#b = b;
    this.#keep = keep;
  }

  diff(aStart: number, aEnd: number, bStart: number, bEnd: number): void {
    const a = this.#a;
    const b = this.#b;
    while (aStart < aEnd && bStart < bEnd && a[aStart] === b[bStart]) {
      this.#keep(aStart, bStart);
      aStart += 1;
      bStart += 1;
    }
    while (aStart < aEnd && bStart < bEnd && a[aEnd - 1] === b[bEnd - 1]) {
      aEnd -= 1;
      bEnd -= 1;
      this.#keep(aEnd, bEnd);
    }
    if (aStart === aEnd || bStart === bEnd) return;
    const split = this.#middle(aStart, aEnd, bStart, bEnd);
    if (split === undefined) return; // nothing in common
    this.diff(aStart, split[0], bStart, split[1]);
    this.diff(split[0], aEnd, split[1], bEnd);
  }

  /**
   * A point on a shortest edit path of the two ranges, found where the furthest paths from the start and
   * from the end meet; undefined when the ranges have no line in common.
   */
  #middle(aStart: number, aEnd: number, bStart: number, bEnd: number): [number, number] | undefined {
    const a = this.#a;
    const b = this.#b;
    const n = aEnd - aStart;
    const m = bEnd - bStart;
    const maxD = Math.ceil((n + m) / 2);
    const offset = maxD;
    const size = 2 * maxD + 2;
    const forward = new Int32Array(size).fill(-1);
    const backward = new Int32Array(size).fill(-1);
    forward[offset + 1] = 0;
    backward[offset + 1] = 0;
    const delta = n - m;
    const odd = (delta & 1) !== 0;
    // Diagonals that ran off an edge are not searched again.
    let forwardStart = 0;
    let forwardEnd = 0;
    let backwardStart = 0;
    let backwardEnd = 0;
    for (let d = 0; d < maxD; d += 1) {
      for (let k = -d + forwardStart; k <= d - forwardEnd; k += 2) {
        const at = offset + k;
        let x =
          k === -d || (k !== d && (forward[at - 1] as number) < (forward[at + 1] as number))
            ? (forward[at + 1] as number)
            : (forward[at - 1] as number) + 1;
        let y = x - k;
        while (x < n && y < m && a[aStart + x] === b[bStart + y]) {
          x += 1;
          y += 1;
        }
        forward[at] = x;
        if (x > n) forwardEnd += 2;
        else if (y > m) forwardStart += 2;
        else if (odd) {
          const other = offset + delta - k;
          if (other >= 0 && other < size && backward[other] !== -1 && x >= n - (backward[other] as number)) return [aStart + x, bStart + y];
        }
      }
      for (let k = -d + backwardStart; k <= d - backwardEnd; k += 2) {
        const at = offset + k;
        let x =
          k === -d || (k !== d && (backward[at - 1] as number) < (backward[at + 1] as number))
            ? (backward[at + 1] as number)
            : (backward[at - 1] as number) + 1;
        let y = x - k;
        while (x < n && y < m && a[aEnd - x - 1] === b[bEnd - y - 1]) {
          x += 1;
          y += 1;
        }
        backward[at] = x;
        if (x > n) backwardEnd += 2;
        else if (y > m) backwardStart += 2;
        else if (!odd) {
          const other = offset + delta - k;
          if (other >= 0 && other < size && forward[other] !== -1) {
            const forwardX = forward[other] as number;
            if (forwardX >= n - x) return [aStart + forwardX, bStart + forwardX - (other - offset)];
          }
        }
      }
    }
    return undefined;
  }
}
