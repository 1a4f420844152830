import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jsonLine, jsonlAuditSink, readAuditLog } from '../../src/governance/jsonl-sink.js';
import type { AuditEvent } from '../../src/governance/audit-event.js';
import { memoryAuditSink } from '../../src/governance/memory-sink.js';
import { createSession, defineTool } from '../../src/session/index.js';
import { z } from 'zod';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { tempDirs } from '../../src/testing/harness.js';

const tempDir = tempDirs({ prefix: 'sessionfs-audit-' });
const scratchFile = (): string => join(tempDir(), 'audit.jsonl');

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('jsonlAuditSink', () => {
  it('appends one JSON object per line, across sinks opened on the same file', async () => {
    const file = scratchFile();
    for (const round of [1, 2]) {
      const sink = jsonlAuditSink(file);
      const workspace = createWorkspace(memoryDriver(), { audit: [sink] });
      await workspace.write(`round-${round}.txt`, 'secret contents');
      await workspace.read(`round-${round}.txt`);
      sink.close();
    }
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain('secret');
    expect(text.split('\n')).toHaveLength(5);
    expect(readAuditLog(file).map(({ op, path }) => `${op} ${path}`)).toEqual([
      'write round-1.txt',
      'read round-1.txt',
      'write round-2.txt',
      'read round-2.txt',
    ]);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('writes queued events once per event-loop turn, and on flush()', async () => {
    const file = scratchFile();
    const sink = jsonlAuditSink(file);
    const event = { at: new Date().toISOString(), actor: { kind: 'orchestrator' as const }, op: 'stat', outcome: 'ok', durationMs: 1 };
    sink(event);
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    await turn();
    expect(readAuditLog(file)).toEqual([event]);
    sink(event);
    sink.flush();
    expect(readAuditLog(file)).toHaveLength(2);
    sink.close();
    expect(() => sink(event)).toThrow(/was closed/);
  });

  it('cuts a line torn by a crash when opened again; readAuditLog leaves a torn last line out', () => {
    const file = scratchFile();
    const whole = `${JSON.stringify({ at: 'x', actor: { kind: 'orchestrator' }, op: 'read', outcome: 'ok', durationMs: 0 })}\n`;
    fs.writeFileSync(file, `${whole}{"at":"y","actor":{"ki`);
    expect(readAuditLog(file)).toHaveLength(1);
    const sink = jsonlAuditSink(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(whole);
    sink({ at: 'z', actor: { kind: 'orchestrator' }, op: 'stat', outcome: 'ok', durationMs: 0 });
    sink.close();
    expect(readAuditLog(file).map((event) => event.at)).toEqual(['x', 'z']);
  });

  it('writes each event as the JSON of exactly its members, whatever its strings hold or its shape', () => {
    const tool = { kind: 'tool', tool: 'edit "quoted"', callId: 'c\\1' } as const;
    const events: unknown[] = [
      { at: 'a', actor: { kind: 'orchestrator' }, op: 'read', path: 'é/ü\n"x".txt', outcome: 'ok', durationMs: 0.125 },
      { at: 'b', sessionId: 's\u2028', actor: tool, op: 'rename', path: 'a', to: 'b\\c', bytes: 3, outcome: 'EPERM', durationMs: 1 },
      { at: 'c', actor: { kind: 'orchestrator' }, op: 'read', outcome: 'ok', durationMs: 2, extra: { nested: [1] } },
      { at: 'd', actor: { kind: 'tool', tool: 't', callId: 'i', more: true }, op: 'x', outcome: 'ok', durationMs: 3 },
      { at: 'e', actor: { kind: 'orchestrator' }, op: 'x', path: 7, outcome: 'ok', durationMs: 4 },
      { at: 'f', actor: { kind: 'orchestrator' }, op: 'x', bytes: Number.NaN, outcome: 'ok', durationMs: Number.POSITIVE_INFINITY },
      { at: 'g', actor: { kind: 'orchestrator' }, op: 'x', path: undefined, outcome: 'ok', durationMs: 5 },
    ];
    for (const event of events) {
      const line = jsonLine(event as AuditEvent);
      expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true);
      expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(event)));
    }
  });

  it('writes numbers exactly as JSON.stringify does: whole numbers, whole microseconds, and any other number', () => {
    const ordered = (event: AuditEvent) => {
      const { at, sessionId, actor, op, path, to, bytes, outcome, durationMs } = event;
      return JSON.stringify({ at, sessionId, actor, op, path, to, bytes, outcome, durationMs });
    };
    const durations = [0, 0.001, 0.01, 0.05, 0.1, 0.125, 0.5, 0.999, 1, 9.999, 10, 10.01, 99.1, 1000, 123456.789, 1e9 + 0.001, 1e12 + 0.5];
    const odd = [0.0005, 1 / 3, 1e-7, 2.5e-4, 1e21, -1.5, -0, 1e13 + 0.1, Number.MAX_SAFE_INTEGER];
    for (let i = 0; i < 20_000; i += 1) durations.push(Math.round(Math.random() * 10 ** (1 + (i % 10))) / 1000);
    const counts = [0, 1, 9, 10, 99, 100, 65536, 2 ** 31, 2 ** 53 - 1, 1e15, 1e16, 1.5];
    for (const durationMs of [...durations, ...odd]) {
      const event: AuditEvent = { at: 'a', actor: { kind: 'orchestrator' }, op: 'read', outcome: 'ok', durationMs };
      expect(jsonLine(event), String(durationMs)).toBe(`${ordered(event)}\n`);
    }
    for (const bytes of counts) {
      const event: AuditEvent = { at: 'a', actor: { kind: 'orchestrator' }, op: 'write', bytes, outcome: 'ok', durationMs: 1 };
      expect(jsonLine(event), String(bytes)).toBe(`${ordered(event)}\n`);
    }
  });

  it('writes an operation the audit recorded as exactly the JSON of its event, fields in a fixed order', async () => {
    const file = scratchFile();
    const jsonl = jsonlAuditSink(file);
    const memory = memoryAuditSink();
    const workspace = createWorkspace(memoryDriver(), { audit: [memory, jsonl], policy: { deny: ['**/.env'] } });
    await workspace.write('dir/é "quoted".txt', 'abc');
    await workspace.readBytes('dir/é "quoted".txt');
    await workspace.rename('dir/é "quoted".txt', 'dir/b.txt');
    await workspace.read('.env').catch(() => undefined);
    await workspace.read('missing').catch(() => undefined);
    await workspace.list('dir');
    jsonl.close();
    const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
    const expected = memory.events.map(({ at, sessionId, actor, op, path, to, bytes, outcome, durationMs }) =>
      JSON.stringify({ at, sessionId, actor, op, path, to, bytes, outcome, durationMs }),
    );
    expect(expected.map((line) => JSON.parse(line).op)).toEqual(['write', 'readBytes', 'rename', 'read', 'read', 'list']);
    expect(lines).toEqual(expected);
  });

  it('writes what a tool call did (session, tool actor, a failure, a rename) as exactly the JSON of its events', async () => {
    const file = scratchFile();
    const jsonl = jsonlAuditSink(file);
    const memory = memoryAuditSink();
    const session = await createSession({ backend: 'memory', audit: [memory, jsonl] });
    const move = defineTool({
      name: 'move_it',
      description: 'renames a file, then fails',
      parameters: z.object({}),
      handler: async (_args, { filesystem }) => {
        await filesystem.write('a.txt', 'x');
        await filesystem.rename('a.txt', 'b.txt');
        await filesystem.read('missing.txt');
        return { success: true, message: 'unreachable' };
      },
    });
    await session.filesystem.write('before.txt', 'y');
    await session.runTool(move, {});
    jsonl.close();
    const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
    const expected = memory.events.map(({ at, sessionId, actor, op, path, to, bytes, outcome, durationMs }) =>
      JSON.stringify({ at, sessionId, actor, op, path, to, bytes, outcome, durationMs }),
    );
    expect(memory.events.some((event) => event.actor.kind === 'tool' && event.op === 'rename' && event.to === 'b.txt')).toBe(true);
    expect(memory.events.some((event) => event.outcome === 'ENOENT')).toBe(true);
    expect(lines).toEqual(expected);
    await session.dispose();
  });

  it('an event that cannot be written as JSON is refused alone: the rest of its batch and later events are written', () => {
    const file = scratchFile();
    const sink = jsonlAuditSink(file);
    const event = (at: string): AuditEvent => ({ at, actor: { kind: 'orchestrator' }, op: 'read', outcome: 'ok', durationMs: 1 });
    sink(event('1'));
    sink({ ...event('bad'), bytes: 1n } as unknown as AuditEvent);
    sink(event('2'));
    sink.flush();
    // The failure is reported once, by the next event (which is kept); the sink goes on working.
    expect(() => sink(event('3'))).toThrow(/BigInt/);
    sink(event('4'));
    sink.close();
    expect(readAuditLog(file).map((logged) => logged.at)).toEqual(['1', '2', '3', '4']);
  });

  it('refuses a missing path', () => {
    expect(() => jsonlAuditSink('')).toThrow(/needs a file path/);
  });

  it('survives kill -9 of the writing process up to the last complete line', async () => {
    const child = fileURLToPath(new URL('./fixtures/audit-child.mjs', import.meta.url));
    if (!fs.existsSync(fileURLToPath(new URL('../../dist/src/index.js', import.meta.url))))
      throw new Error('dist/ is missing: run `npm run build` (npm test does) before this test');
    const file = scratchFile();
    const proc = spawn(process.execPath, [child, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('go') ? resolve() : undefined));
      proc.on('exit', (code) => reject(new Error(`child exited early with ${String(code)}`)));
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    proc.kill('SIGKILL');
    await exited;
    const events = readAuditLog(file);
    expect(events.length).toBeGreaterThanOrEqual(100);
    events.forEach((event, index) => expect(event).toMatchObject({ op: 'write', path: `dir/file-${index % 100}.txt`, outcome: 'ok' }));
    // Opened again after the crash, the log goes on cleanly.
    const sink = jsonlAuditSink(file);
    sink({ at: 'after', actor: { kind: 'orchestrator' }, op: 'stat', outcome: 'ok', durationMs: 0 });
    sink.close();
    expect(readAuditLog(file).at(-1)?.at).toBe('after');
    expect(readAuditLog(file)).toHaveLength(events.length + 1);
  });
});
