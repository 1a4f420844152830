import { expect, it } from 'vitest';
import { z as z3 } from 'zod/v3';
import { z as z4 } from 'zod/v4';
import { createSession, defineTool } from '../../src/index.js';
import { assertZod4 } from '../../src/zod-version.js';

// zod is a peer dependency: a tool's schema is the application's own zod, which must be zod 4.
it('a zod 3 schema is refused with an error saying zod 4 is needed', () => {
  const define = () =>
    defineTool({
      name: 'old',
      description: 'x',
      parameters: z3.object({ a: z3.string() }) as never,
      handler: () => ({ success: true, message: '' }),
    });
  expect(define).toThrow(
    expect.objectContaining({
      code: 'EINVAL',
      message: expect.stringContaining('tool old: parameters is a zod 3 schema; sessionfs needs zod 4'),
    }),
  );
  expect(() =>
    defineTool({ name: 'none', description: 'x', parameters: {} as never, handler: () => ({ success: true, message: '' }) }),
  ).toThrow('tool none: parameters must be a zod 4 schema');
});

it('a zod 4 schema from zod/v4 works as one from zod', async () => {
  const tool = defineTool({
    name: 'echo',
    description: 'x',
    parameters: z4.object({ text: z4.string(), times: z4.number().optional() }),
    handler: ({ text }) => ({ success: true, message: text }),
  });
  expect(tool.jsonSchema).toMatchObject({ type: 'object', required: ['text'] });
  await using session = await createSession({ backend: 'memory' });
  expect(await session.runTool(tool, { text: 'hi', times: null })).toMatchObject({ success: true, message: 'hi' });
});

it('loading sessionfs with zod 3 installed fails at once, saying zod 4 is needed (every entry point checks first)', () => {
  expect(() => assertZod4(z3)).toThrow(
    expect.objectContaining({
      code: 'ENOTSUP',
      message: 'sessionfs needs zod 4, and the "zod" installed here is zod 3: npm install zod@4',
    }),
  );
  expect(() => assertZod4(z4)).not.toThrow();
});
