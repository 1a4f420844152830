import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { createDeepAgent, FilesystemBackend, type BackendProtocolV2 } from 'deepagents';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deepagentsBackend } from '../../src/adapters/deepagents.js';
import { createSession, type Session } from '../../src/index.js';

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);
const TREE: Record<string, string | Uint8Array> = {
  'README.md': '# demo\n\nCall greet(name).\n',
  'empty.txt': '',
  'blank.txt': '  \n',
  'notes.txt': 'one\ntwo\nthree\nfour\nfive\n',
  'no-newline.txt': 'last line',
  'src/greet.ts': 'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n',
  'src/main.ts': 'import { greet } from "./greet.js";\n\nconsole.log(greet("a.b"), greet("world"));\n',
  'src/util/deep.ts': 'export const deep = "greet (a.b) [x]";\n',
  'src/data.json': '{"greet": true}\n',
  'img/logo.png': PNG,
  'docs/guide.md': 'greet everyone\n',
  '.hidden/greet.txt': 'greet from a dot directory\n',
  '.gitignore': 'ignored.txt\n',
  'ignored.txt': 'greet, though .gitignore names me\n',
  'crlf.txt': 'greet\r\nagain\r\n',
};

/**
 * The same sequence of `BackendProtocolV2` calls against deepagents' own `FilesystemBackend` (virtual mode,
 * on a temporary directory holding the tree) and against `deepagentsBackend(session)` (a memory session
 * holding the same tree): every result is identical, except the documented differences normalised below.
 */
describe('sessionfs/deepagents against deepagents’ FilesystemBackend, call by call', () => {
  let dir: string;
  let theirs: FilesystemBackend;
  let session: Session;
  let ours: BackendProtocolV2;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sessionfs-deepagents-'));
    session = await createSession({ backend: 'memory' });
    for (const [path, content] of Object.entries(TREE)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
      if (typeof content === 'string') await session.filesystem.write(path, content);
      else await session.filesystem.writeBytes(path, content);
    }
    theirs = new FilesystemBackend({ rootDir: dir, virtualMode: true });
    ours = deepagentsBackend(session);
  });
  afterAll(async () => {
    await session.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * Differences by design: timestamps are each backend's own; an error's reason after `Error … '<path>': `
   * is ours (never a host path; theirs is Node's, with the host path); grep matches come sorted by path
   * (ripgrep's order varies from run to run), a CRLF line's text without its `\r`.
   */
  const normalise = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.replace(/^(Error (?:reading|writing|editing) file '[^']*'|Error deleting '[^']*'): [\s\S]*$/, '$1: <reason>');
    if (value instanceof Uint8Array) return { bytes: Buffer.from(value).toString('hex') };
    if (Array.isArray(value)) return value.map(normalise);
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      if (key === 'modified_at' || key === 'created_at') out[key] = typeof entry === 'string' ? '<time>' : entry;
      else if (key === 'matches' && Array.isArray(entry))
        out[key] = normalise(
          (entry as { path: string; line: number; text: string }[])
            .map((match) => ({ ...match, text: match.text.replace(/\r$/, '') }))
            .sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line),
        );
      else out[key] = normalise(entry);
    }
    return out;
  };
  const same = async (label: string, call: (backend: BackendProtocolV2) => unknown) => {
    const expected = normalise(await call(theirs));
    const actual = normalise(await call(ours));
    expect(actual, label).toEqual(expected);
    return actual;
  };

  it('ls: entries with sizes, directories with a trailing slash; a file or a missing path lists nothing', async () => {
    for (const path of ['/', '/src', '/src/', '/img', '/missing', '/notes.txt']) await same(`ls ${path}`, (b) => b.ls(path));
    expect(await same('ls /', (b) => b.ls('/'))).toMatchObject({
      files: expect.arrayContaining([{ path: '/src/', is_dir: true, size: 0, modified_at: '<time>' }]),
    });
  });

  it('read: windows, pagination fields, empty files, binary files, directories and missing files', async () => {
    const cases: [string, number?, number?][] = [
      ['/notes.txt'],
      ['/notes.txt', 1, 2],
      ['/notes.txt', 3, 10],
      ['/notes.txt', 5],
      ['/notes.txt', 99],
      ['/notes.txt', 0, 0],
      ['/notes.txt', -3, 2.7],
      ['/no-newline.txt'],
      ['/empty.txt'],
      ['/blank.txt'],
      ['/src/greet.ts', 0, 2],
      ['/src/data.json'],
      ['/README.md'],
      ['/img/logo.png'],
      ['/src'],
      ['/missing.txt'],
      ['src/main.ts'],
    ];
    for (const [path, offset, limit] of cases) await same(`read ${path} ${offset} ${limit}`, (b) => b.read(path, offset, limit));
    expect(await ours.read('/notes.txt', 1, 2)).toEqual({
      content: 'two\nthree',
      mimeType: 'text/plain',
      totalLines: 5,
      startLine: 2,
      endLine: 3,
      nextOffset: 3,
    });
  });

  it('readRaw: text as a string, binary as bytes, with the MIME type', async () => {
    for (const path of ['/src/greet.ts', '/README.md', '/img/logo.png', '/empty.txt'])
      await same(`readRaw ${path}`, (b) => b.readRaw(path));
  });

  it('grep: literal text (regex characters are plain), per-directory, a file-name glob at any depth, a cap', async () => {
    const cases: [string, (string | null)?, (string | null)?, (number | null)?][] = [
      ['greet'],
      ['greet', '/src'],
      ['greet', '/src', '*.ts'],
      ['greet', '/', '*.md'],
      ['greet', null, '**/*.ts'],
      ['a.b'],
      ['(a.b) [x]'],
      ['nothing-matches-this'],
      ['greet', '/missing'],
      ['greet', '/src/main.ts'],
      ['greet', '/', null, 99],
    ];
    for (const [pattern, path, glob, max] of cases)
      await same(`grep ${pattern} ${path} ${glob} ${max}`, (b) => b.grep(pattern, path, glob, max));
    // Under a cap that cuts, which matches are kept follows each one's order (ripgrep's varies): counts and flags agree.
    for (const max of [0, 2]) {
      const [theirMatches, ourMatches] = [await theirs.grep('greet', '/', null, max), await ours.grep('greet', '/', null, max)];
      expect([ourMatches.matches?.length, ourMatches.truncated], `grep cap ${max}`).toEqual([
        theirMatches.matches?.length,
        theirMatches.truncated,
      ]);
    }
    expect((await ours.grep('greet', '/', null, 2)).matches?.map((m) => m.path)).toEqual(['/README.md', '/crlf.txt']); // path order;
  });

  it('glob: files only, dot files included, relative to a path, a leading slash ignored', async () => {
    const cases: [string, string?][] = [
      ['**/*.ts'],
      ['*.md'],
      ['**/*.md'],
      ['*', '/src'],
      ['**/*', '/src'],
      ['/src/*.ts'],
      ['*.ts', '/src/util'],
      ['**/*', '/missing'],
      ['*', '/notes.txt'],
      ['**/*.{png,json}'],
    ];
    for (const [pattern, path] of cases) await same(`glob ${pattern} ${path}`, (b) => b.glob(pattern, path));
  });

  it('write, edit and delete: results, messages and the tree after them', async () => {
    const steps: [string, (b: BackendProtocolV2) => unknown][] = [
      ['write new', (b) => b.write('/new/deep/file.txt', 'hello\n')],
      ['write over', (b) => b.write('/notes.txt', 'replaced\n')],
      ['write binary (base64)', (b) => b.write('/img/dot.png', Buffer.from(PNG).toString('base64'))],
      ['edit once', (b) => b.edit('/src/greet.ts', 'Hello', 'Hi')],
      ['edit missing string', (b) => b.edit('/src/greet.ts', 'Bonjour', 'x')],
      ['edit ambiguous', (b) => b.edit('/src/main.ts', 'greet', 'welcome')],
      ['edit replace all', (b) => b.edit('/src/main.ts', 'greet', 'welcome', true)],
      ['edit empty old string', (b) => b.edit('/README.md', '', 'x')],
      ['edit empty file', (b) => b.edit('/empty.txt', '', 'now text\n')],
      ['edit a directory', (b) => b.edit('/src', 'a', 'b')],
      ['edit a missing file', (b) => b.edit('/missing.ts', 'a', 'b')],
      ['delete a file', (b) => b.delete!('/docs/guide.md')],
      ['delete a directory', (b) => b.delete!('/src/util')],
      ['delete a missing path', (b) => b.delete!('/nope')],
    ];
    for (const [label, step] of steps) await same(label, step);
    await same('tree after', (b) => b.glob('**/*'));
    for (const path of ['/src/greet.ts', '/src/main.ts', '/notes.txt', '/empty.txt', '/img/dot.png'])
      await same(`after: ${path}`, (b) => b.read(path));
  });

  it('uploadFiles and downloadFiles: bytes both ways, per-file error codes', async () => {
    await same('upload', (b) =>
      b.uploadFiles!([
        ['/up/a.bin', Uint8Array.from([1, 2, 3])],
        ['/up/b.txt', new TextEncoder().encode('b\n')],
      ]),
    );
    await same('download', (b) => b.downloadFiles!(['/up/a.bin', '/up/b.txt', '/missing', '/up']));
  });

  it('every change is a session tool call; a failed edit is rolled back and recorded', () => {
    const calls = session.calls.map((record) => [record.tool, record.result.success, record.result.rolledBack]);
    expect(calls).toContainEqual(['edit_file', false, true]);
    expect(calls).toContainEqual(['write_file', true, false]);
    expect(calls).toContainEqual(['upload_file', true, false]);
    expect(calls.filter(([tool]) => tool === 'delete')).toHaveLength(3);
  });
});

describe('sessionfs/deepagents: documented differences', () => {
  it('a symlink inside the workspace is followed (deepagents refuses to read through one); escapes are refused by both', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sessionfs-deepagents-link-'));
    try {
      await writeFile(join(dir, 'target.txt'), 'through the link\n');
      await symlink('target.txt', join(dir, 'link.txt'));
      await using session = await createSession({ backend: 'host', root: dir });
      const ours = deepagentsBackend(session);
      const theirs = new FilesystemBackend({ rootDir: dir, virtualMode: true });
      expect(await ours.read('/link.txt')).toMatchObject({ content: 'through the link\n' });
      expect(await theirs.read('/link.txt')).toMatchObject({ error: expect.stringMatching(/^Error reading file '\/link.txt'/) });
      const escape = await ours.read('/../etc/passwd');
      expect(escape.error).toMatch(/^Error reading file '\/..\/etc\/passwd': /);
      expect(escape.error).not.toContain(dir);
      expect((await theirs.read('/../etc/passwd')).error).toBeDefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('createDeepAgent over a session, driven by a fake chat model', () => {
  it('reads, fails an edit (rolled back, the model sees the error), fixes it, answers', async () => {
    await using session = await createSession({ backend: 'memory' });
    await session.filesystem.write('src/greet.ts', 'export const greet = (name: string) => `Hello, ${name}!`;\n');
    const seen: BaseMessage[][] = [];
    const lastTool = (messages: BaseMessage[]) => messages.filter((m) => ToolMessage.isInstance(m)).at(-1)?.text;
    const model = fakeModel()
      .respondWithTools([{ name: 'read_file', args: { file_path: '/src/greet.ts' }, id: 'read-1' }])
      .respond((messages) => {
        seen.push(messages);
        return new AIMessage({
          content: '',
          tool_calls: [{ name: 'edit_file', args: { file_path: '/src/greet.ts', old_string: 'Bonjour', new_string: 'Hi' }, id: 'edit-1' }],
        });
      })
      .respond((messages) => {
        seen.push(messages);
        return new AIMessage({
          content: '',
          tool_calls: [{ name: 'edit_file', args: { file_path: '/src/greet.ts', old_string: 'Hello', new_string: 'Hi' }, id: 'edit-2' }],
        });
      })
      .respond((messages) => {
        seen.push(messages);
        return new AIMessage('greet now says Hi.');
      });
    const agent = createDeepAgent({ model, backend: deepagentsBackend(session) });
    const state = await agent.invoke({ messages: [new HumanMessage('Make greet say Hi')] });

    expect(lastTool(seen[0]!)).toContain('Hello, ${name}!'); // the read reached the model
    expect(lastTool(seen[1]!)).toBe("Error: String not found in file: 'Bonjour'");
    expect(lastTool(seen[2]!)).toBe("Successfully replaced 1 occurrence(s) in '/src/greet.ts'");
    expect(String(state.messages.at(-1)?.content)).toBe('greet now says Hi.');
    expect((await session.filesystem.read('src/greet.ts')).content).toBe('export const greet = (name: string) => `Hi, ${name}!`;');
    expect(session.calls.map((r) => [r.tool, r.result.success, r.result.rolledBack])).toEqual([
      ['edit_file', false, true],
      ['edit_file', true, false],
    ]);
  });
});
