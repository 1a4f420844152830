import type { WorkspaceSnapshot } from '../workspace/types.js';

/**
 * Where a session was forked from another: `snapshot` is the child's tree as the fork began, taken in the
 * child's workspace, so the child and every later fork of it can open it (forks inherit their parent's
 * snapshots); `order` tells earlier forks from later ones.
 */
export interface ForkPoint {
  parent: string;
  child: string;
  snapshot: WorkspaceSnapshot;
  order: number;
}

interface HasId {
  readonly id: string;
}

const lineages = new WeakMap<object, readonly ForkPoint[]>();
let forks = 0;

/** Records that `child` was forked from `parent`, its tree then being `snapshot` (in `child`). */
export function recordFork(parent: HasId, child: HasId, snapshot: WorkspaceSnapshot): void {
  forks += 1;
  lineages.set(child, [...(lineages.get(parent) ?? []), { parent: parent.id, child: child.id, snapshot, order: forks }]);
}

/**
 * The merge base of two sessions: the tree both descend from, as the fork point that holds it and which of
 * the two can open it (`ours` or `theirs`). For a session and its fork, the fork point; for two forks of one
 * session, the earlier of their fork points (the later one holds changes the other never had). `undefined`
 * when they share no ancestor through `fork()` (or are the same session).
 */
export function mergeBase(ours: HasId, theirs: HasId): { point: ForkPoint; holder: 'ours' | 'theirs' } | undefined {
  const [oursLine, theirsLine] = [lineages.get(ours) ?? [], lineages.get(theirs) ?? []];
  const oursChain = [...oursLine.map((point) => point.parent), ours.id];
  const theirsChain = [...theirsLine.map((point) => point.parent), theirs.id];
  let common = -1;
  while (common + 1 < Math.min(oursChain.length, theirsChain.length) && oursChain[common + 1] === theirsChain[common + 1]) common += 1;
  if (common < 0 || ours.id === theirs.id) return undefined;
  const [oursPoint, theirsPoint] = [oursLine[common], theirsLine[common]];
  if (oursPoint === undefined) return theirsPoint === undefined ? undefined : { point: theirsPoint, holder: 'theirs' };
  if (theirsPoint === undefined || oursPoint.order < theirsPoint.order) return { point: oursPoint, holder: 'ours' };
  return { point: theirsPoint, holder: 'theirs' };
}
