import { describe, expect, it } from 'vitest';
import {
  PROTOCOL_METHOD_NAMES,
  PROTOCOL_METHODS,
  type MethodsOf,
  type ProtocolMethodTraits,
} from '../../src/workspace/protocol-methods.js';
import type { SnapshotableWorkspace } from '../../src/workspace/types.js';
import { BACKENDS } from '../support/backends.js';

/**
 * The table is keyed by the `Workspace` type's methods: tsc (`npm run lint`) refuses it when a method added
 * to the type is not listed. The assignment below is that refusal, planted, so that a key type loose enough
 * to let a missing method through (a plain `string`, say) makes this file fail to compile.
 */
type WithNewMethod = SnapshotableWorkspace & { frobnicate(path: string): Promise<void> };
// @ts-expect-error the table lacks frobnicate
const lacksNewMethod: Readonly<Record<MethodsOf<WithNewMethod>, ProtocolMethodTraits>> = PROTOCOL_METHODS;

describe.each(BACKENDS)('the protocol method table on $name', ({ create }) => {
  it('names a method of its workspaces, each one', async () => {
    expect(lacksNewMethod).toBe(PROTOCOL_METHODS);
    const workspace = await create();
    try {
      const notMethods = PROTOCOL_METHOD_NAMES.filter((name) => typeof workspace[name] !== 'function');
      expect(notMethods).toEqual([]);
    } finally {
      await workspace.dispose();
    }
  });
});
