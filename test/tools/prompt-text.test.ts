import { describe, expect, it } from 'vitest';
import { workspacePrompt } from '../../src/tools/index.js';

describe('workspacePrompt: text behaviour', () => {
  it('tells the model how line endings, BOMs, encodings and stale writes are handled', () => {
    const prompt = workspacePrompt();
    expect(prompt).toContain('### Text files');
    expect(prompt).toContain('without `\\r` and without a byte-order mark');
    expect(prompt).toContain('`EILSEQ`');
    expect(prompt).toContain('`ECONFLICT` (stale)');
    expect(workspacePrompt({ staleWriteGuard: false })).not.toContain('ECONFLICT');
  });
});
