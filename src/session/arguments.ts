import { z } from 'zod';

export type PreparedArguments = { ok: true; params: unknown } | { ok: false; message: string };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

function acceptsNull(field: z.ZodType): boolean {
  try {
    return field.safeParse(null).success;
  } catch {
    return false; // an async refinement cannot be probed synchronously: treat null as absent
  }
}

/**
 * What a model sends, made ready for the tool's zod object schema, before validation:
 * - `null` for a property whose schema does not accept `null` means "absent" (OpenAI strict mode sends `null`
 *   for every optional argument it leaves out), so the default applies;
 * - a key the schema does not know is refused, naming the allowed keys (zod would silently drop it, and the
 *   model would believe its argument was used). A schema with a catchall (`z.looseObject`, `.catchall()`)
 *   accepts extra keys and is left alone.
 * Other schemas (not a top-level object) get the arguments unchanged.
 */
export function prepareArguments(parameters: z.ZodType, raw: unknown): PreparedArguments {
  if (!(parameters instanceof z.ZodObject) || !isPlainObject(raw)) return { ok: true, params: raw };
  const shape = parameters.shape as Record<string, z.ZodType>;
  const allowed = Object.keys(shape);
  const acceptsExtra = parameters._zod.def.catchall !== undefined && !(parameters._zod.def.catchall instanceof z.ZodNever);
  const unknown = acceptsExtra ? [] : Object.keys(raw).filter((key) => !Object.hasOwn(shape, key));
  if (unknown.length > 0) {
    const names = unknown.map((key) => JSON.stringify(key)).join(', ');
    return {
      ok: false,
      message: `unknown parameter${unknown.length === 1 ? '' : 's'} ${names}; allowed: ${allowed.length === 0 ? '(none)' : allowed.join(', ')}`,
    };
  }
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const field = shape[key];
    if (value === null && field !== undefined && !acceptsNull(field)) continue;
    params[key] = value;
  }
  return { ok: true, params };
}
