import { beforeAll, describe, expect, it } from 'vitest';

// A suite whose setup fails: vitest marks its tests skipped, and the summary line must still say failed.
describe('a suite whose beforeAll throws', () => {
  beforeAll(() => {
    throw new Error('setup failed on purpose');
  });
  it('never runs', () => expect(1).toBe(1));
});

it('passes', () => expect(1).toBe(1));
