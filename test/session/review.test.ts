import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { workspaceTools, type WorkspaceToolName } from '../../src/tools/index.js';

const tools = new Map(workspaceTools().map((tool) => [tool.name, tool]));
const tool = (name: WorkspaceToolName) => tools.get(name)!;

describe('session review: what a model reads', () => {
  it('a workspace path whose tail spells a hidden host directory (the temp dir) is shown as it is', async () => {
    await using session = await createSession({ backend: 'memory' });
    // e.g. `w/tmp/a.txt`: the scrubber hid the temp dir's path inside it (`w<host path>`) in every listing,
    // read and error, so the model could not name the file it had just written.
    const path = `w${realpathSync(tmpdir())}/a.txt`;
    const written = await session.runTool(tool('write_file'), { path, content: 'x\n' });
    expect(written.message).toBe(`Created ${path} (2 bytes).`);
    expect((await session.runTool(tool('glob'), { pattern: '**/*' })).message).toContain(path);
    const missing = await session.runTool(tool('read_file'), { path: `${path}.nope` });
    expect(missing.message).toContain(`${path}.nope does not exist`);
  });
});
