import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/host-files/sandbox.js';
import { scratch } from './support.js';

// After opening a file, the host backend asks the kernel where the descriptor really is (/proc/self/fd)
// and refuses anything but the path it resolved: that defeats a component swapped for a link that leaves
// the root. A file replaced by a concurrent write between the open and that check is no escape.
describe.skipIf(!fs.existsSync('/proc/self/fd'))('checking an opened descriptor against its resolved path', () => {
  const { dir } = scratch();

  it('accepts a file that a write replaced between the open and the check (the old version is read)', async () => {
    const root = dir();
    const sandbox = new Sandbox(root);
    const abs = join(root, 'big.bin');
    fs.writeFileSync(abs, 'old contents');
    const fd = fs.openSync(abs, 'r');
    try {
      fs.writeFileSync(join(root, 'new.tmp'), 'new');
      fs.renameSync(join(root, 'new.tmp'), abs); // what an atomic write does
      expect(() => sandbox.verifyDescriptorSync(fd, abs, 'big.bin')).not.toThrow();
      await expect(sandbox.verifyDescriptor(fd, abs, 'big.bin')).resolves.toBeUndefined();
      expect(fs.readFileSync(fd, 'utf8')).toBe('old contents');
    } finally {
      fs.closeSync(fd);
    }
  });

  it('still refuses a descriptor that is somewhere else, deleted or not', async () => {
    const root = dir();
    const outside = dir();
    const sandbox = new Sandbox(root);
    const elsewhere = join(outside, 'secret');
    fs.writeFileSync(elsewhere, 'secret');
    const fd = fs.openSync(elsewhere, 'r');
    try {
      const expected = join(root, 'secret');
      expect(() => sandbox.verifyDescriptorSync(fd, expected, 'secret')).toThrow(expect.objectContaining({ code: 'EACCES' }));
      fs.unlinkSync(elsewhere);
      expect(() => sandbox.verifyDescriptorSync(fd, expected, 'secret')).toThrow(expect.objectContaining({ code: 'EACCES' }));
      await expect(sandbox.verifyDescriptor(fd, expected, 'secret')).rejects.toMatchObject({ code: 'EACCES' });
    } finally {
      fs.closeSync(fd);
    }
  });
});
