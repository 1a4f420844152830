import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { shellTool, type ShellResult } from '../../src/shell/index.js';
import { diskTree, RealBash, workspaceTree } from './support.js';

/**
 * A script of what coding agents type most, run step by step in the workspace's shell and in real GNU bash
 * in a temporary directory: every step must print the same stdout and exit with the same status, and the
 * trees must be the same at the end. Outputs whose order is the directory's are piped through `sort`.
 */
const SCRIPT = [
  "mkdir -p src/lib docs && printf 'export const a = 1;\\n// TODO: a\\n' > src/a.ts",
  "cat > src/lib/b.ts <<'EOF'\nimport { a } from '../a';\n// TODO: b\nexport const b = a + 1;\nEOF",
  'echo "# Title" > docs/readme.md && echo "more text" >> docs/readme.md',
  'ls',
  'ls src src/lib',
  "find . -name '*.ts' | sort",
  'find . -type d | sort',
  'grep -rn TODO src docs | sort',
  'grep -c export src/a.ts src/lib/b.ts',
  'grep -q missing src/a.ts',
  "sed -i 's/TODO/DONE/' src/a.ts && cat src/a.ts",
  'mkdir -p build/out && mv docs/readme.md build/out/ && ls build/out docs',
  'cp src/a.ts src/a.copy.ts && wc -l < src/a.copy.ts',
  'cat src/lib/b.ts | grep -v TODO | wc -l',
  'head -n 1 src/lib/b.ts; tail -n 1 src/lib/b.ts',
  'for f in $(find src -name "*.ts" | sort); do echo "$f: $(wc -l < $f)"; done',
  "awk -F'=' '/const/ {print $1}' src/lib/b.ts",
  'echo hello world | tr a-z A-Z > up.txt && cat up.txt',
  'sort -r src/lib/b.ts | uniq | head -2',
  'cd src/lib && pwd | sed "s|.*/||" && cat ../a.ts | wc -l',
  'test -f nope.txt || echo missing',
  'cat nope.txt 2>/dev/null; echo "status $?"',
  'echo one > notes.txt; echo two >> notes.txt; cat notes.txt | tail -1',
  'rm -r build && rm src/a.copy.ts && ls',
  'x=$(grep -l DONE src/*.ts); echo "found $x"',
  'diff src/a.ts src/a.ts && echo same',
];

describe('the shell against real bash', () => {
  for (const backend of ['memory', 'host'] as const) {
    it(`an everyday agent script gives the same stdout, exit codes and tree (${backend})`, async () => {
      await using session = await createSession({ backend });
      const bash = shellTool();
      const real = new RealBash();
      try {
        for (const command of SCRIPT) {
          const expected = await real.run(command);
          const result = await session.runTool(bash, { command });
          expect(result.success, `${command}: ${result.message}`).toBe(true);
          const value = result.value as ShellResult;
          expect({ command, stdout: value.stdout, exitCode: value.exitCode }).toEqual({
            command,
            stdout: expected.stdout,
            exitCode: expected.exitCode,
          });
        }
        expect(await workspaceTree(session.filesystem)).toEqual(diskTree(real.dir));
      } finally {
        real.dispose();
      }
    });
  }
});
