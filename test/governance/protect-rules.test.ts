import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROTECT, ProtectRules } from '../../src/governance/protect.js';

/** The protected root of `path` by the definition: its shortest prefix some pattern's regex matches. */
function reference(patterns: readonly string[], path: string): { root: string; pattern: string } | undefined {
  const matchers = patterns.map((pattern) => ({ pattern, regex: picomatch.makeRe(pattern, { dot: true, nocase: true }) }));
  const segments = path.split('/');
  for (let length = 1; length <= segments.length; length += 1) {
    const prefix = segments.slice(0, length).join('/');
    const matcher = matchers.find((candidate) => candidate.regex.test(prefix));
    if (matcher !== undefined) return { root: prefix, pattern: matcher.pattern };
  }
  return undefined;
}

const PATTERNS = [...DEFAULT_PROTECT, 'Secrets/**', '**/*.pem', 'config/ci.yml', 'a?c/**'];

describe('ProtectRules', () => {
  it('finds the protected root of a path whatever its case, glob segments or not', () => {
    const rules = new ProtectRules(PATTERNS);
    expect(rules.rootOf('x/.GIT/hooks/pre-commit')).toEqual({ root: 'x/.GIT', pattern: '**/.git/**' });
    expect(rules.rootOf('SECRETS/token')).toEqual({ root: 'SECRETS', pattern: 'Secrets/**' });
    expect(rules.rootOf('config/CI.YML')).toEqual({ root: 'config/CI.YML', pattern: 'config/ci.yml' });
    expect(rules.rootOf('deep/key.PEM')).toEqual({ root: 'deep/key.PEM', pattern: '**/*.pem' });
    expect(rules.rootOf('abc/x')).toEqual({ root: 'abc', pattern: 'a?c/**' });
    expect(rules.rootOf('config/ci.yaml')).toBeUndefined();
    expect(rules.rootOf('src/git/index.ts')).toBeUndefined();
  });

  it('answers as the patterns themselves do, for any path (literal segments only spare the regex)', () => {
    const segment = fc.constantFrom(
      '.git',
      '.GIT',
      '.Git',
      'git',
      '.gitx',
      'x.git',
      '.hg',
      '.SVN',
      '.jj',
      'secrets',
      'SeCrEtS',
      'config',
      'ci.yml',
      'CI.yml',
      'k.pem',
      'abc',
      'aXc',
      'src',
      'ſecrets',
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), (segments) => {
        const path = segments.join('/');
        // A fresh rule set per path: what one path leaves remembered never answers for another here.
        expect(new ProtectRules(PATTERNS).rootOf(path)).toEqual(reference(PATTERNS, path));
      }),
      { numRuns: 2000 },
    );
  });
});
