import type { SearchDirectoryPin } from '../driver.js';
import type { NormalizedPath } from '../paths.js';
import type { LineMatch } from './match-worker.js';

/** One entry of the shared layer's walk: files include links to files inside the root. */
export interface SearchEntry {
  path: NormalizedPath;
  isFile: boolean;
  /** A link (to a file inside the root, when `isFile`): read through `readFile`, never by name in its directory. */
  isLink?: boolean;
  /** Set by grep when it matched this file while the walk ran (see `ScanAhead`): its matches, in line order. */
  matched?: readonly LineMatch[];
}

/** What glob and grep need from a workspace: a walk below a base (the base itself when it is a file), and file bytes. */
export interface SearchSource {
  /** Batches of entries, as the walk lists them (a batch per slice of the host's listing); `descend` as in `BatchedWalk`. */
  walk(base: NormalizedPath, descend?: (directory: NormalizedPath) => boolean): AsyncIterable<readonly SearchEntry[]>;
  readFile(path: NormalizedPath): Promise<Uint8Array>;
  /** The driver's `pinSearchDirectory`, when it has one: files of a pinned directory are read by the search workers. */
  pinDirectory?(path: NormalizedPath): SearchDirectoryPin | undefined;
}
