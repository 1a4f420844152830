// The benches' shared corpus: a copy of this project's node_modules (real package trees: deep folders,
// many small files, some large ones), cut at `files` regular files in sorted walk order, links left out.
import * as fs from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const nodeModules = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules');

/** Copies the first `limit` files of node_modules into `corpus`; returns how many and their bytes. */
export function copyCorpus(corpus, limit) {
  let files = 0;
  let bytes = 0;
  const visit = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (files >= limit) return;
      const from = join(dir, entry.name);
      const to = join(corpus, relative(nodeModules, from));
      if (entry.isDirectory()) {
        fs.mkdirSync(to, { recursive: true });
        visit(from);
      } else if (entry.isFile()) {
        fs.copyFileSync(from, to);
        files += 1;
        bytes += fs.statSync(to).size;
      }
    }
  };
  fs.mkdirSync(corpus, { recursive: true });
  visit(nodeModules);
  return { files, bytes };
}
