import { describe, expect, it } from 'vitest';
import { redactHostPaths } from '../../src/tools/index.js';

describe('tools review: redactHostPaths', () => {
  it('hides the slash-less form of a host directory only as a whole path, never an ordinary word', () => {
    // `sessionfs mcp --allow /tmp` (or a working directory /app, /data) turned every "tmp" in a file the model
    // read into "<host path>" (reproduced over MCP: `import <host path> from "<host path>"`).
    expect(redactHostPaths('import tmp from "tmp"; myapp/app.ts', { root: '/' }, ['/tmp', '/app'])).toBe('import tmp from "tmp"; myapp/app.ts');
    expect(redactHostPaths('in tmp/ws/b.ts, xtmp/ws/c.ts, tmp/ws2/d.ts', { root: '/tmp/ws' })).toBe('in <host path>/b.ts, xtmp/ws/c.ts, tmp/ws2/d.ts');
    expect(redactHostPaths('"srv/data" and srv/data/y', { root: '/' }, ['/srv/data'])).toBe('"<host path>" and <host path>/y');
  });
});
