import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every document a comment, doc or README names exists: a reference to a moved or never-written doc (or to
 * the design notes, which are not in the repository) fails here instead of sending a reader nowhere.
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SOURCES = ['src', 'test', 'docs', 'bench', 'examples', 'scripts'];
const TOP = ['README.md', 'CHANGELOG.md'];
const TEXT = /\.(ts|mts|mjs|js|md)$/;

/** `docs/<name>.md` anywhere in a file (in test/, only in comments: test data uses such paths as workspace files). */
const DOC_PATH = /\bdocs\/[A-Za-z0-9_./-]+?\.md\b/g;
/** A relative markdown link to a `.md` file, `[text](other.md#anchor)`. */
const MD_LINK = /\]\(([^)#\s:]+\.md)(?:#[^)]*)?\)/g;
/** The design notes the project was built from live outside the repository: cite the doc, or state the rule. */
const DESIGN_NOTES = new RegExp(`\\b${'DESIGN'}(\\.md)?\\b`, 'g');

function filesUnder(dir: string): string[] {
  if (!existsSync(join(REPO, dir))) return [];
  return readdirSync(join(REPO, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && TEXT.test(entry.name))
    .map((entry) => relative(REPO, join(entry.parentPath, entry.name)))
    .filter((path) => !path.includes('node_modules') && !path.includes('/fixtures/'));
}

/** What of a file is prose: a test's comments (its strings are test data), a document without its code (examples of workspace paths). */
function prose(file: string, text: string): string {
  if (file.startsWith('test/'))
    return text
      .split('\n')
      .filter((line) => /^\s*(\/\/|\/\*|\*)/.test(line))
      .join('\n');
  if (file.endsWith('.md')) return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return text;
}

interface Reference {
  from: string;
  to: string;
}

function references(): { dead: Reference[]; design: string[] } {
  const dead: Reference[] = [];
  const design: string[] = [];
  for (const file of [...TOP, ...SOURCES.flatMap(filesUnder)]) {
    const full = readFileSync(join(REPO, file), 'utf8');
    const text = prose(file, full);
    for (const [path] of text.matchAll(DOC_PATH)) if (!existsSync(join(REPO, path))) dead.push({ from: file, to: path });
    if (file.endsWith('.md'))
      for (const [, link] of text.matchAll(MD_LINK))
        if (!existsSync(join(REPO, dirname(file), link!))) dead.push({ from: file, to: link! });
    if (file !== 'test/ecosystem/doc-references.test.ts' && DESIGN_NOTES.test(text)) design.push(file);
    DESIGN_NOTES.lastIndex = 0;
  }
  return { dead, design };
}

describe('references to documents', () => {
  const found = references();

  it('name only docs that exist', () => {
    expect(found.dead).toEqual([]);
  });

  it('cite no design notes outside the repository', () => {
    expect(found.design).toEqual([]);
  });
});

describe('the README', () => {
  it('stays short: at most 200 lines, the rest in docs/', () => {
    const lines = readFileSync(join(REPO, 'README.md'), 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    expect(lines.length).toBeLessThanOrEqual(200);
  });
});
