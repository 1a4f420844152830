import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSession, defineTool, type HydratedSession } from '../../src/session/index.js';
import { WorkspaceError } from '../../src/workspace/errors.js';
import type { SnapshotableWorkspace, WorkspaceSnapshot } from '../../src/workspace/types.js';
import { createWorkspace } from '../../src/workspace/create-workspace.js';
import { hostDriver } from '../../src/backends/host/index.js';
import { memoryDriver } from '../../src/backends/memory/index.js';
import { overlayDriver } from '../../src/backends/overlay/index.js';
import { tempDirs } from '../../src/testing/harness.js';

/**
 * Random sequences of protocol calls, snapshots, restores and failing tool calls, run in lock step on the
 * memory, host and overlay backends and on a reference model: a Map from path to file content or `DIR`.
 * After every step each backend's whole tree (every directory, every file's bytes) must equal the model.
 *
 * The model says what a successful call does; whether a call succeeds is for the backends to agree on
 * (all fail with a WorkspaceError, or all succeed), and a failed call must change nothing. Snapshots are
 * copies of the model; a restore sets it back; a tool call whose handler writes and then throws is rolled
 * back, so the model does not move.
 */
type Model = Map<string, string>;
const DIR = '<dir>';

const NAMES = ['a', 'b', 'c'];
const pathArb = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
const contentArb = fc.constantFrom('', 'x', 'hello\n', 'other bytes');

type Step =
  | { op: 'write'; path: string; content: string }
  | { op: 'mkdir'; path: string }
  | { op: 'delete'; path: string }
  | { op: 'rename'; from: string; to: string; overwrite: boolean }
  | { op: 'copy'; from: string; to: string; overwrite: boolean }
  | { op: 'snapshot' }
  | { op: 'restore'; pick: number }
  | { op: 'failingCall'; path: string; content: string };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('write' as const), path: pathArb, content: contentArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('mkdir' as const), path: pathArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), path: pathArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), from: pathArb, to: pathArb, overwrite: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('copy' as const), from: pathArb, to: pathArb, overwrite: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('snapshot' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('restore' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('failingCall' as const), path: pathArb, content: contentArb }) },
);

const parentOf = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
const within = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

/** The model after a successful call (what it does when it succeeds). */
function apply(model: Model, step: Step): void {
  const ensureParents = (path: string): void => {
    for (let parent = parentOf(path); parent !== ''; parent = parentOf(parent)) model.set(parent, DIR);
  };
  const subtree = (path: string): Array<[string, string]> => [...model].filter(([p]) => within(p, path));
  switch (step.op) {
    case 'write':
      ensureParents(step.path);
      model.set(step.path, step.content);
      return;
    case 'mkdir':
      ensureParents(step.path);
      model.set(step.path, DIR);
      return;
    case 'delete':
      for (const [p] of subtree(step.path)) model.delete(p);
      return;
    case 'rename':
    case 'copy': {
      const moved = subtree(step.from);
      for (const [p] of subtree(step.to)) model.delete(p);
      if (step.op === 'rename') for (const [p] of moved) model.delete(p);
      ensureParents(step.to);
      for (const [p, v] of moved) model.set(step.to + p.slice(step.from.length), v);
      return;
    }
    default:
      throw new Error(`not a protocol call: ${step.op}`);
  }
}

async function call(ws: SnapshotableWorkspace, step: Step): Promise<void> {
  switch (step.op) {
    case 'write':
      return void (await ws.write(step.path, step.content));
    case 'mkdir':
      return ws.mkdir(step.path);
    case 'delete':
      return ws.delete(step.path, { recursive: true });
    case 'rename':
      return ws.rename(step.from, step.to, { overwrite: step.overwrite });
    case 'copy':
      return ws.copy(step.from, step.to, { overwrite: step.overwrite, recursive: true });
    default:
      throw new Error(`not a protocol call: ${step.op}`);
  }
}

/** Every directory and file below the root, through the protocol. */
async function treeOf(ws: SnapshotableWorkspace): Promise<Model> {
  const out: Model = new Map();
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await ws.list(dir)) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory) {
        out.set(path, DIR);
        await visit(path);
      } else out.set(path, Buffer.from((await ws.readBytes(path)).content).toString('utf8'));
    }
  };
  await visit('');
  return out;
}

const sorted = (model: Model): Array<[string, string]> => [...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** A tool whose handler makes a change, then throws: `runTool` must roll the change back. */
const failing = defineTool({
  name: 'write_then_throw',
  description: 'writes, then fails',
  parameters: z.object({ path: z.string(), content: z.string() }),
  async handler({ path, content }, { filesystem }) {
    await filesystem.write(path, content).catch(() => undefined);
    await filesystem.delete('a', { recursive: true }).catch(() => undefined);
    throw new Error('the handler failed after writing');
  },
});

const lowerDir = tempDirs({ prefix: 'sessionfs-model-lower-' });

describe('protocol sequences match a reference model on every backend', () => {
  it('after every step, memory, host and overlay hold exactly the model', async () => {
    let sequences = 0;
    let steps = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 30 }), async (sequence) => {
        sequences += 1;
        const lower = lowerDir();
        // The starting tree: the overlay shows it from its lower directory, the others are given it.
        fs.writeFileSync(join(lower, 'a'), 'lower a');
        fs.mkdirSync(join(lower, 'b'));
        fs.writeFileSync(join(lower, 'b', 'c'), 'lower b/c');
        const model: Model = new Map([
          ['a', 'lower a'],
          ['b', DIR],
          ['b/c', 'lower b/c'],
        ]);
        const backends: Array<{ name: string; ws: SnapshotableWorkspace }> = [
          { name: 'memory', ws: createWorkspace(memoryDriver()) },
          { name: 'host', ws: createWorkspace(hostDriver()) },
          { name: 'overlay', ws: createWorkspace(overlayDriver({ lower, allowedHostRoots: [lower] })) },
        ];
        const sessions: HydratedSession[] = [];
        try {
          for (const { name, ws } of backends) {
            if (name !== 'overlay')
              for (const [path, value] of sorted(model)) await (value === DIR ? ws.mkdir(path) : ws.write(path, value));
            sessions.push(await createSession({ workspace: ws, retention: { maxHistory: 5, maxSnapshots: 5 } }));
          }
          const snapshots: Array<{ model: Model; records: WorkspaceSnapshot[] }> = [];
          for (const step of sequence) {
            steps += 1;
            if (step.op === 'snapshot') {
              snapshots.push({ model: new Map(model), records: await Promise.all(backends.map(({ ws }) => ws.snapshot())) });
            } else if (step.op === 'restore') {
              if (snapshots.length === 0) continue;
              const chosen = snapshots[step.pick % snapshots.length]!;
              for (const [i, { ws }] of backends.entries()) await ws.restore(chosen.records[i]!);
              model.clear();
              for (const [p, v] of chosen.model) model.set(p, v);
            } else if (step.op === 'failingCall') {
              for (const session of sessions) {
                const result = await session.runTool(failing, { path: step.path, content: step.content });
                expect(result).toMatchObject({ success: false, rolledBack: true });
              }
            } else {
              const outcomes: Array<string> = [];
              for (const { ws } of backends) {
                try {
                  await call(ws, step);
                  outcomes.push('ok');
                } catch (error) {
                  if (!(error instanceof WorkspaceError)) throw error;
                  outcomes.push('failed');
                }
              }
              expect(
                new Set(outcomes).size,
                `${JSON.stringify(step)}: ${backends.map((b, i) => `${b.name} ${outcomes[i]}`).join(', ')}`,
              ).toBe(1);
              if (outcomes[0] === 'ok') apply(model, step);
            }
            for (const { name, ws } of backends) {
              expect(sorted(await treeOf(ws)), `${name} after ${JSON.stringify(step)}`).toEqual(sorted(model));
            }
          }
        } finally {
          for (const session of sessions) await session.dispose();
          for (const { ws } of backends) await ws.dispose().catch(() => undefined);
        }
      }),
      { numRuns: Number(process.env.SESSIONFS_MODEL_RUNS ?? 60), seed: Number(process.env.SESSIONFS_MODEL_SEED ?? 20261125) },
    );
    console.log(`model property: ${sequences} sequences, ${steps} steps, on memory, host and overlay`);
  }, 300_000);

  it('refuses to move or copy a path onto a directory that holds it, on every backend (found by the property above)', async () => {
    const lower = lowerDir();
    fs.mkdirSync(join(lower, 'b', 'a'), { recursive: true });
    fs.writeFileSync(join(lower, 'b', 'a', 'f'), 'f');
    const workspaces = [
      createWorkspace(memoryDriver()),
      createWorkspace(hostDriver()),
      createWorkspace(overlayDriver({ lower, allowedHostRoots: [lower] })),
    ];
    try {
      for (const ws of workspaces) {
        if (ws.backend !== 'overlay') await ws.write('b/a/f', 'f');
        for (const verb of ['rename', 'copy'] as const) {
          const error = await ws[verb]('b/a', 'b', { overwrite: true, recursive: true }).catch((e: unknown) => e);
          expect(error, `${ws.backend} ${verb}`).toMatchObject({ code: 'EINVAL' });
          expect(await treeOf(ws)).toEqual(
            new Map([
              ['b', DIR],
              ['b/a', DIR],
              ['b/a/f', 'f'],
            ]),
          );
        }
      }
    } finally {
      for (const ws of workspaces) await ws.dispose();
    }
  });
});
