import { lazyRequire } from '../../workspace/lazy-require.js';
import { isUtf8, type DecodedText } from '../../text/encoding.js';

const diff = lazyRequire<typeof import('diff')>('diff');

/** Context lines around each change in a dry run's diff (git's default). */
const CONTEXT_LINES = 3;

/**
 * The unified diff of an edit, in two forms. `exact` is over the text as stored (CR kept, a UTF-8 BOM
 * restored), with `a/` and `b/` prefixes, so that `git apply` in the workspace's checkout applies it to a
 * UTF-8 file byte for byte; for a file in another encoding it is the decoded text. `shown` is what the
 * model reads: the same diff without `\r` and without a BOM, like `read_file`.
 */
export function editDiff(path: string, before: DecodedText, after: string): { exact: string; shown: string } {
  const bom = before.bom && isUtf8(before.encoding) ? '\ufeff' : '';
  const patch = diff().createTwoFilesPatch(`a/${path}`, `b/${path}`, bom + before.text, bom + after, undefined, undefined, {
    context: CONTEXT_LINES,
  });
  // jsdiff starts with a line of '=' (a separator from its `Index:` form): not part of a unified diff.
  const exact = patch.replace(/^=+\n/, '');
  return { exact, shown: exact.replace(/\r(?=\n|$)/g, '').replace(/\ufeff/g, '') };
}
