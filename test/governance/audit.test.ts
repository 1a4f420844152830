import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { checkWallClock, wallClockAt } from '../../src/governance/audit-clock.js';
import type { AuditEvent } from '../../src/governance/audit-event.js';
import { memoryAuditSink } from '../../src/governance/memory-sink.js';
import { createSession, defineTool, type HydratedSession } from '../../src/session/index.js';
import { expectError } from '../../src/testing/harness.js';
import { backendNamed, SHARED_FILE_BACKENDS, disposing, SESSION_KINDS } from '../support/backends.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { memoryDriver } from '../../src/backends/memory/index.js';

const SECRET = 'correct horse battery staple';

/** The events without their timing, for exact comparisons. */
const shape = (events: readonly AuditEvent[]): Array<Omit<AuditEvent, 'at' | 'durationMs'>> =>
  events.map(({ at, durationMs, ...rest }) => {
    expect(Date.parse(at)).not.toBeNaN();
    expect(durationMs).toBeGreaterThanOrEqual(0);
    return rest;
  });

const orchestrator = { kind: 'orchestrator' } as const;

describe.each(SHARED_FILE_BACKENDS)('audit on $name', (backend) => {
  const { create } = disposing(backend);

  it('records every protocol operation with its actor, path, bytes, outcome and duration, never contents', async () => {
    const sink = memoryAuditSink();
    const workspace = create({ audit: [sink] });
    await workspace.write('notes/a.txt', SECRET);
    await workspace.writeBytes('b.bin', new Uint8Array([1, 2, 3]));
    await workspace.read('notes/a.txt');
    await workspace.readBytes('b.bin', { offset: 1 });
    await workspace.exists('nope');
    await workspace.stat('b.bin');
    await workspace.list();
    await workspace.glob('**/*.txt');
    await workspace.grep('horse', { path: 'notes' });
    await workspace.mkdir('dir');
    await workspace.copy('b.bin', 'dir/c.bin');
    await workspace.rename('dir/c.bin', 'dir/d.bin');
    await workspace.delete('dir', { recursive: true });
    expect(shape(sink.events)).toEqual([
      { actor: orchestrator, op: 'write', path: 'notes/a.txt', bytes: SECRET.length, outcome: 'ok' },
      { actor: orchestrator, op: 'writeBytes', path: 'b.bin', bytes: 3, outcome: 'ok' },
      { actor: orchestrator, op: 'read', path: 'notes/a.txt', outcome: 'ok' },
      { actor: orchestrator, op: 'readBytes', path: 'b.bin', bytes: 2, outcome: 'ok' },
      { actor: orchestrator, op: 'exists', path: 'nope', outcome: 'ok' },
      { actor: orchestrator, op: 'stat', path: 'b.bin', outcome: 'ok' },
      { actor: orchestrator, op: 'list', path: '.', outcome: 'ok' },
      { actor: orchestrator, op: 'glob', path: '.', outcome: 'ok' },
      { actor: orchestrator, op: 'grep', path: 'notes', outcome: 'ok' },
      { actor: orchestrator, op: 'mkdir', path: 'dir', outcome: 'ok' },
      { actor: orchestrator, op: 'copy', path: 'b.bin', to: 'dir/c.bin', outcome: 'ok' },
      { actor: orchestrator, op: 'rename', path: 'dir/c.bin', to: 'dir/d.bin', outcome: 'ok' },
      { actor: orchestrator, op: 'delete', path: 'dir', outcome: 'ok' },
    ]);
    expect(JSON.stringify(sink.events)).not.toContain('horse');
  });

  it('records a failed operation with its error code', async () => {
    const sink = memoryAuditSink();
    const workspace = create({ audit: [sink], policy: { deny: ['**/.env'] }, limits: { maxWriteBytes: 4 } });
    await expectError(workspace.read('missing.txt'), 'FileNotFoundError', 'ENOENT');
    await expectError(workspace.write('.env', 'TOKEN=1'), 'PolicyError', 'EPERM');
    await expectError(workspace.write('big.txt', 'too big'), 'LimitExceededError', 'EFBIG');
    await expectError(workspace.write(42 as unknown as string, 'x'), 'InvalidArgumentError', 'EINVAL');
    expect(shape(sink.events).map(({ op, path, bytes, outcome }) => ({ op, path, bytes, outcome }))).toEqual([
      { op: 'read', path: 'missing.txt', bytes: undefined, outcome: 'ENOENT' },
      // A failed write reports the bytes it was given (a successful one, the bytes it wrote).
      { op: 'write', path: '.env', bytes: 7, outcome: 'EPERM' },
      { op: 'write', path: 'big.txt', bytes: 7, outcome: 'EFBIG' },
      { op: 'write', path: undefined, bytes: 1, outcome: 'EINVAL' },
    ]);
    // Durations are whole microseconds.
    for (const { durationMs } of sink.events) expect(Math.round(durationMs * 1000)).toBeCloseTo(durationMs * 1000, 6);
  });

  it('records snapshot, restore, diff and patch once each', async () => {
    const sink = memoryAuditSink();
    const workspace = create({ audit: [sink] });
    const before = await workspace.snapshot({ tag: 'before' });
    await workspace.write('a.txt', 'a\n');
    await workspace.diff(before);
    await workspace.patch(before);
    await workspace.restore(before);
    expect(sink.events.map((event) => event.op)).toEqual(['snapshot', 'write', 'diff', 'patch', 'restore']);
    expect(sink.events.every((event) => event.outcome === 'ok')).toBe(true);
  });

  it('never lets a failing sink break an operation, and reports each failing sink once', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error & { code?: string }): void => {
      if (warning.code === 'SESSIONFS_AUDIT_SINK') warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      const kept = memoryAuditSink();
      const throwing = (): void => {
        throw new Error('disk full');
      };
      const rejecting = (): Promise<void> => Promise.reject(new Error('network down'));
      const workspace = create({ audit: [throwing, rejecting, kept] });
      for (let i = 0; i < 3; i += 1) await workspace.write(`f${i}.txt`, 'x');
      expect(await workspace.read('f2.txt')).toMatchObject({ content: 'x' });
      await new Promise((resolve) => setImmediate(resolve));
      expect(kept.events).toHaveLength(4);
      expect(warnings).toHaveLength(2);
      expect(warnings.join('\n')).toMatch(/disk full[\s\S]*network down/);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('audit sinks and options', () => {
  it('memoryAuditSink keeps the latest max events, oldest first', () => {
    const sink = memoryAuditSink({ max: 3 });
    for (let i = 0; i < 2000; i += 1) sink({ at: '', actor: orchestrator, op: `op${i}`, outcome: 'ok', durationMs: 0 });
    expect(sink.events.map((event) => event.op)).toEqual(['op1997', 'op1998', 'op1999']);
  });

  it('memoryAuditSink: recorded events and events given whole keep their order; `events` is one array, brought up to date on each read', async () => {
    const sink = memoryAuditSink({ max: 4 });
    const workspace = createWorkspace(memoryDriver(), { audit: [sink] });
    const given = (op: string): AuditEvent => ({ at: 'x', actor: orchestrator, op, outcome: 'ok', durationMs: 0 });
    await workspace.write('a.txt', 'a');
    sink(given('given-1'));
    await workspace.read('a.txt');
    const events = sink.events;
    expect(events.map((event) => event.op)).toEqual(['write', 'given-1', 'read']);
    const [first] = events;
    expect(sink.events[0]).toBe(first); // made once, then kept
    await workspace.stat('a.txt');
    sink(given('given-2'));
    expect(sink.events).toBe(events);
    expect(events.map((event) => event.op)).toEqual(['given-1', 'read', 'stat', 'given-2']);
    // More than `max` since the last read: the latest `max`, none of the ones read before.
    for (let i = 0; i < 6; i += 1) await workspace.exists(`f${i}`);
    expect(sink.events.map((event) => event.path)).toEqual(['f2', 'f3', 'f4', 'f5']);
    expect(shape(sink.events)[0]).toEqual({ actor: orchestrator, op: 'exists', path: 'f2', outcome: 'ok' });
  });

  it('built-in sinks see every event in the order the operations ended, across workspaces, with or without a turn of the loop', async () => {
    const shared = memoryAuditSink({ max: 5000 });
    const first = createWorkspace(memoryDriver(), { audit: [shared] });
    const second = createWorkspace(memoryDriver(), { audit: [shared, () => undefined] });
    const expected: string[] = [];
    // More operations than the audit queues before handing them over, none of them yielding to the event loop.
    for (let i = 0; i < 1500; i += 1) {
      await (i % 3 === 0 ? second : first).write(`f${i}.txt`, 'x');
      expected.push(`f${i}.txt`);
      if (i === 700) {
        shared({ at: 'given', actor: orchestrator, op: 'mark', outcome: 'ok', durationMs: 0 });
        expected.push('mark');
      }
    }
    expect(shared.events.map((event) => (event.op === 'mark' ? 'mark' : event.path))).toEqual(expected);
    await new Promise((resolve) => setImmediate(resolve));
    expect(shared.events).toHaveLength(1501);
  });

  it('an event starts at the wall-clock time the operation started, to the millisecond', async () => {
    const sink = memoryAuditSink();
    const workspace = createWorkspace(memoryDriver(), { audit: [sink] });
    for (let i = 0; i < 20; i += 1) {
      const before = Date.now();
      await workspace.write('a.txt', String(i));
      const after = Date.now();
      const at = Date.parse(sink.events.at(-1)?.at ?? '');
      // The ISO time keeps whole milliseconds; the monotonic clock it comes from may sit a millisecond apart from Date.now().
      expect(at).toBeGreaterThanOrEqual(before - 1);
      expect(at).toBeLessThanOrEqual(after + 1);
    }
  });

  it('follows a wall clock that was set since the process started', () => {
    const wallTime = (now: number): number => {
      checkWallClock(now);
      return wallClockAt(now);
    };
    const now = performance.now();
    expect(Math.abs(wallTime(now) - Date.now())).toBeLessThanOrEqual(2);
    const stepped = Date.now() + 3_600_000;
    const spy = vi.spyOn(Date, 'now').mockReturnValue(stepped);
    try {
      // A reading more than a second after the last check compares the clocks again.
      expect(Math.abs(wallTime(now + 1500) - stepped)).toBeLessThanOrEqual(1);
      expect(Math.abs(wallTime(now + 1600) - (stepped + 100))).toBeLessThanOrEqual(1);
    } finally {
      spy.mockRestore();
    }
    // Back on the real clock (a reading before the last check also compares them again).
    expect(Math.abs(wallTime(performance.now()) - Date.now())).toBeLessThanOrEqual(2);
  });

  it('refuses malformed sinks at construction', async () => {
    const { create } = disposing(backendNamed('memory'));
    expect(() => create({ audit: 'log.jsonl' as never })).toThrow(/audit must be an array of sinks/);
    expect(() => create({ audit: [{}] as never })).toThrow(/audit must be an array of sinks/);
    expect(() => memoryAuditSink({ max: 0 })).toThrow(/positive whole number/);
  });

  it("lives in the workspace's own methods: nothing is added to the instance, and a prototype method called on it records itself", async () => {
    const sink = memoryAuditSink();
    const workspace = createWorkspace(memoryDriver(), { audit: [sink], policy: { deny: ['**/.env'] } });
    const events = workspace.watch();
    await workspace.write('a.txt', 'A');
    await workspace.restore(await workspace.snapshot());
    const prototype = Object.getPrototypeOf(workspace) as Record<string, unknown>;
    const methods = Object.getOwnPropertyNames(prototype).filter(
      (name) => typeof Object.getOwnPropertyDescriptor(prototype, name)?.value === 'function',
    );
    expect(methods).toEqual(expect.arrayContaining(['watch', 'stat', 'restore', 'dispose', 'writeFiles']));
    expect(Object.getOwnPropertyNames(workspace).filter((name) => methods.includes(name))).toEqual([]);
    await (prototype['stat'] as typeof workspace.stat).call(workspace, 'a.txt');
    expect(sink.events.at(-1)).toMatchObject({ op: 'stat', path: 'a.txt', outcome: 'ok' });
    await events.return?.();
    await workspace.dispose();
  });
});

describe('audit in a session: tool calls are the actor of what they do', () => {
  const sessions: HydratedSession[] = [];
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
  });

  const writeThenMaybeFail = defineTool({
    name: 'write_then_maybe_fail',
    description: 'Writes a file, then fails when asked',
    parameters: z.object({ fail: z.boolean() }),
    async handler({ fail }, { filesystem }) {
      await filesystem.write('out.txt', SECRET);
      if (fail) throw new Error('the tool broke');
      return { success: true, message: 'written' };
    },
  });

  it.each(SESSION_KINDS)('%s: records the call, its snapshot, operations and rollback under its id', async (kind) => {
    const sink = memoryAuditSink();
    const session = await createSession({ backend: kind, audit: [sink] });
    sessions.push(session);
    await session.filesystem.write('seed.txt', 'seed');
    await session.runTool(writeThenMaybeFail, { fail: false });
    await session.runTool(writeThenMaybeFail, { fail: true });
    const [first, second] = session.calls;
    expect(first?.callId).not.toBe(second?.callId);
    const tool = (callId: string | undefined) => ({ kind: 'tool', tool: 'write_then_maybe_fail', callId });
    expect(shape(sink.events).map(({ sessionId, actor, op, outcome }) => ({ sessionId, actor, op, outcome }))).toEqual([
      { sessionId: session.id, actor: orchestrator, op: 'write', outcome: 'ok' },
      { sessionId: session.id, actor: tool(first?.callId), op: 'snapshot', outcome: 'ok' },
      { sessionId: session.id, actor: tool(first?.callId), op: 'write', outcome: 'ok' },
      { sessionId: session.id, actor: tool(first?.callId), op: 'toolCall', outcome: 'ok' },
      { sessionId: session.id, actor: tool(second?.callId), op: 'snapshot', outcome: 'ok' },
      { sessionId: session.id, actor: tool(second?.callId), op: 'write', outcome: 'ok' },
      { sessionId: session.id, actor: tool(second?.callId), op: 'restore', outcome: 'ok' },
      { sessionId: session.id, actor: tool(second?.callId), op: 'toolCall', outcome: 'ETOOL' },
    ]);
    expect(JSON.stringify(sink.events)).not.toContain('horse');
  });

  it('refuses audit with a given workspace (audit the workspace itself) and still records the calls there', async () => {
    const { create } = disposing(backendNamed('kv (third-party driver)'));
    const sink = memoryAuditSink();
    const workspace = create({ audit: [sink] });
    await expect(createSession({ workspace, audit: [sink] })).rejects.toThrow(/audit configures a workspace the session creates/);
    const session = await createSession({ workspace });
    sessions.push(session);
    await session.runTool(writeThenMaybeFail, { fail: false });
    const call = session.calls[0]?.callId;
    expect(sink.events.filter((event) => event.op === 'toolCall')).toMatchObject([
      { sessionId: session.id, actor: { kind: 'tool', tool: 'write_then_maybe_fail', callId: call }, outcome: 'ok' },
    ]);
  });
});
