import { z } from 'zod';
import { NotSupportedError } from './workspace/errors.js';

/**
 * Throws unless `zod` is zod 4. zod is a peer dependency (tool schemas are the application's own zod), so
 * an application that forced zod 3 past npm's peer check would otherwise fail on the first zod 4 call
 * made while sessionfs loads, with a message that names neither package.
 */
export function assertZod4(zod: unknown): void {
  if (typeof (zod as { toJSONSchema?: unknown } | undefined)?.toJSONSchema === 'function') return;
  throw new NotSupportedError('sessionfs needs zod 4, and the "zod" installed here is zod 3: npm install zod@4');
}

// Imported first by every entry point, so this runs before any module that uses zod.
assertZod4(z);
