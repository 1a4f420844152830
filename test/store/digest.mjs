// One digest of a workspace's files (paths and bytes), shared by the remote-session test and its child
// process, so "bit-exact on the other machine" is checked by the same code on both sides.
import { createHash } from 'node:crypto';

export async function digestOf(workspace) {
  const hash = createHash('sha256');
  for (const { path } of await workspace.glob('**/*', { dot: true })) {
    hash
      .update(path)
      .update('\0')
      .update((await workspace.readBytes(path)).content)
      .update('\0');
  }
  return hash.digest('hex');
}
