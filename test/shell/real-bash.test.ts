import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/session/index.js';
import { shellTool, type ShellResult } from '../../src/shell/index.js';
import { diskTree, RealBash, workspaceTree } from './support.js';
import { SESSION_KINDS } from '../support/backends.js';

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

/**
 * More of the same: copies and moves over existing files (`sort f > t && mv t f`), -exec and xargs, sed
 * with several expressions, heredocs with expansions and tabs, stderr redirections, `rm -rf` and globs.
 * Left out where just-bash differs from GNU on its own filesystem too: `grep -r PATTERN .` prints `src/x`
 * where GNU prints `./src/x`, `uniq -c` and `wc` pad counts differently, and just-bash's grep reads
 * binary files as text, and its `cp` has no `-f`.
 */
const MORE = [
  "mkdir -p src/lib && printf 'export const a = 1;\\n\\n// TODO: a\\nX marks\\n' > src/a.ts && printf 'b\\nX\\n' > src/lib/b.ts",
  'touch t1 t2 t3 && ls',
  "printf 'x\\ny\\n' | tee t.txt | wc -l",
  'cp -r src src2 && find src2 | sort',
  'mv src2 moved && ls && ls moved',
  'rm -rf moved && ls',
  "find . -name '*.ts' -exec grep -l export {} \\; | sort",
  'find . -type f | sort | xargs grep -l X',
  "sed -i -e 's/a/A/g' -e '/^$/d' src/a.ts && cat src/a.ts",
  "sed -n '2,3p' src/a.ts",
  "grep -rn --include='*.ts' X src | sort",
  "grep -rl X src | sort | xargs sed -i 's/X/Y/' && cat src/lib/b.ts",
  'name=world; cat <<EOF > g.txt\nhello $name\n$(echo sub)\nEOF\ncat g.txt',
  'cat > tabs.txt <<-EOF\n\tindented\n\tEOF\ncat tabs.txt',
  'ls nope 2>&1 | wc -l',
  'ls nope > out.txt 2> err.txt; echo $?; wc -l < err.txt; wc -c < out.txt',
  ': > empty.txt; wc -c < empty.txt',
  'mkdir -p a/b/c && rmdir a/b/c && ls a/b | wc -l',
  "printf 'b:2\\na:1\\nb:2\\n' > kv.txt && cut -d: -f1 kv.txt | sort | uniq",
  'sort -t: -k2 -n kv.txt | sort -u',
  'cat t.txt kv.txt > both.txt && wc -l < both.txt',
  "tr -d '\\n' < t.txt; echo",
  "sed 's/^/> /' t.txt",
  'mv t1 a/ && cp t2 a/b/ && find a | sort',
  'find . -empty -type f | sort',
  'find . -maxdepth 1 -type f | sort',
  "grep -oE 'export|const' src/a.ts",
  'while read line; do echo "> $line"; done < t.txt',
  'echo abc > x.txt && echo def >> x.txt && sort -r x.txt > y.txt && mv -f y.txt x.txt && cat x.txt',
  'cp kv.txt x.txt && cp t.txt x.txt && cat x.txt && mv x.txt kv.txt && ls -1 | wc -l',
  'rm -r a src/lib && find . | sort',
  'rm nope 2>/dev/null; echo $?',
  'mkdir exists; mkdir exists 2>/dev/null; echo $?',
  'seq 3 | awk "{s+=\\$1} END {print s}"',
  'rm -f *.txt t2 && ls',
];

describe('the shell against real bash', () => {
  for (const [name, script] of [
    ['an everyday agent script', SCRIPT],
    ['copies, moves, xargs, heredocs and redirections', MORE],
  ] as const)
    for (const backend of SESSION_KINDS) {
      it(`${name} gives the same stdout, exit codes and tree (${backend})`, async () => {
        await using session = await createSession({ backend });
        const bash = shellTool();
        const real = new RealBash();
        try {
          for (const command of script) {
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
