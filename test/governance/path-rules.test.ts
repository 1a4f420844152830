import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { PathRules } from '../../src/governance/policy.js';
import type { NormalizedPath } from '../../src/workspace/paths.js';

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
