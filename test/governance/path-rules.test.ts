import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { PathRules } from '../../src/governance/policy.js';
import type { NormalizedPath } from '../../src/workspace/paths.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

/** The rules as the policy defines them, spelled the slow way: picomatch per glob, per directory prefix. */
function reference(deny: string[], allow: string[], blocked: string[]) {
  const denied = (prefix: string) => deny.some((glob) => picomatch(glob, { dot: true, nocase: true })(prefix));
  const allowed = (prefix: string) => allow.some((glob) => picomatch(glob, { dot: true })(prefix));
  return (path: string): boolean => {
    const segments = path.split('/');
    let ok = false;
    for (let depth = 1; depth <= segments.length; depth += 1) {
      const prefix = segments.slice(0, depth).join('/');
      const name = (segments[depth - 1] as string).toLowerCase();
      if (denied(prefix) || blocked.some((ext) => name.endsWith(ext) && name.length > ext.length)) return false;
      if (allowed(prefix)) ok = true;
    }
    return ok;
  };
}

describe('PathRules (compiled once, verdicts remembered)', () => {
  it('judges like the globs one by one, for many deny globs and past the remembered verdicts', () => {
    const deny = ['**/.env', '**/secrets/**', '**/*.secret', 'build', 'Docs/Private*'];
    const allow = ['src/**', 'docs/**', 'package.json'];
    const blocked = ['.pem', '.key'];
    const rules = new PathRules({ deny, allow, blockedExtensions: blocked });
    const expected = reference(deny, allow, blocked);
    const names = ['a.ts', '.env', '.ENV', 'x.secret', 'k.PEM', 'pem', 'secrets', 'privateer', 'ok.key.txt'];
    const dirs = ['src', 'src/secrets', 'docs', 'docs/private', 'DOCS/Private', 'build', 'src/build', 'lib', 'package.json'];
    // Enough distinct paths to turn the remembered verdicts over (8,192 kept), each judged twice.
    const paths: string[] = [];
    for (let i = 0; i < 1200; i += 1) for (const dir of dirs) paths.push(`${dir}/n${i}/${names[i % names.length]}`);
    for (const round of [1, 2])
      for (const path of paths) {
        const verdict = rules.judge(path as NormalizedPath);
        expect(verdict === 'admitted', `${path} (round ${round})`).toBe(expected(path));
      }
    expect(rules.judge('docs/private/a.ts' as NormalizedPath)).toBe('denied');
    expect(rules.judge('src/secrets/n1/a.ts' as NormalizedPath)).toBe('denied');
    expect(rules.judge('src/n1/a.ts' as NormalizedPath)).toBe('admitted');
  });
});

describe('verdicts remembered under the string the caller gave', () => {
  it('gives each given string the verdict of the path it normalises to, whichever spelling is judged first', () => {
    // Each raw spelling next to a normalised path it could be confused with: [given, what it normalises to, verdict].
    const cases: Array<[string, string, 'admitted' | 'denied']> = [
      ['src/../.env', '.env', 'denied'],
      ['./src/a.ts', 'src/a.ts', 'admitted'],
      ['src/.env/../a.ts', 'src/a.ts', 'admitted'],
      ['src/a.ts/../.env', 'src/.env', 'denied'],
      ['docs//../src/b.ts', 'src/b.ts', 'admitted'],
      ['src/./x.pem', 'src/x.pem', 'denied'],
    ];
    for (const rawFirst of [true, false]) {
      const rules = new PathRules({ allow: ['src/**'], deny: ['**/.env'], blockedExtensions: ['.pem'] });
      for (const [given, path, verdict] of cases) {
        const judged = rawFirst
          ? [rules.judge(path, given), rules.judge(path), rules.judge(path, given)]
          : [rules.judge(path), rules.judge(path, given), rules.judge(path)];
        expect(judged, `${given} (${rawFirst ? 'raw' : 'normalised'} first)`).toEqual([verdict, verdict, verdict]);
      }
      // The raw spellings never stand for another path: the ones that were admitted stay admitted, and the others denied.
      expect(rules.judge('.env')).toBe('denied');
      expect(rules.judge('src/a.ts')).toBe('admitted');
    }
  });

  it("through a workspace: a denied path stays denied however it is spelled, and the same string is judged by each workspace's own policy", async () => {
    const strict = createWorkspace(memoryDriver(), { policy: { deny: ['**/.env'] } });
    const open = createWorkspace(memoryDriver(), { policy: { deny: ['**/*.pem'] } });
    const given = ['src', '..', '.env'].join('/'); // one string object, given to both
    for (let round = 0; round < 3; round += 1) {
      await expect(strict.write(given, 'x')).rejects.toMatchObject({ code: 'EPERM' });
      await expect(open.write(given, 'x')).resolves.toMatchObject({ path: '.env' });
      await expect(strict.read('./.env')).rejects.toMatchObject({ code: 'EPERM' });
    }
  });
});
