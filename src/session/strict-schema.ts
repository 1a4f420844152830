/**
 * OpenAI strict mode accepts a subset of JSON Schema: every object lists all its properties in `required`
 * and says `additionalProperties: false`; an optional property is expressed as a nullable one; only these
 * keywords are understood. Anything else makes the API reject the whole tool list.
 * (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas)
 */
export const STRICT_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'description',
  'title',
  '$ref',
  '$defs',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Bounds that only restate "a safe integer" (zod's `.int()`): they say nothing to a model and strict mode refuses them. */
const isVacuousBound = (key: string, value: unknown): boolean =>
  (key === 'maximum' && typeof value === 'number' && value >= Number.MAX_SAFE_INTEGER) ||
  (key === 'minimum' && typeof value === 'number' && value <= Number.MIN_SAFE_INTEGER);

/** Length limits strict mode cannot enforce are kept for the model as words, and still enforced by `runTool`. */
function lengthNote(schema: JsonObject): string | undefined {
  const notes: string[] = [];
  if (typeof schema.minLength === 'number') notes.push(`at least ${schema.minLength} characters`);
  if (typeof schema.maxLength === 'number') notes.push(`at most ${schema.maxLength} characters`);
  return notes.length === 0 ? undefined : `(${notes.join(', ')})`;
}

function makeNullable(schema: JsonObject): JsonObject {
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema = { ...schema, enum: [...(schema.enum as unknown[]), null] };
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.type))
    return schema.type.includes('null') ? schema : { ...schema, type: [...(schema.type as unknown[]), 'null'] };
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...(schema.anyOf as unknown[]), { type: 'null' }] };
  return { anyOf: [schema, { type: 'null' }] };
}

function strictNode(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictNode);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (!STRICT_KEYWORDS.has(key) || isVacuousBound(key, value)) continue;
    if (key === 'properties' || key === '$defs') {
      out[key] = Object.fromEntries(Object.entries(value as JsonObject).map(([name, child]) => [name, strictNode(child)]));
    } else out[key] = strictNode(value);
  }
  const note = lengthNote(node);
  if (note !== undefined) out.description = typeof out.description === 'string' ? `${out.description} ${note}` : note;
  if (node.type === 'object' || isObject(node.properties)) {
    const properties = (out.properties ?? {}) as JsonObject;
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, child]) => [name, required.has(name) ? child : makeNullable(child as JsonObject)]),
    );
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

/**
 * The OpenAI strict-mode form of a tool's (input-side) JSON Schema: optional properties become required and
 * nullable (`runTool` reads `null` as "absent", so a strict model's `null` gets the default), every object
 * closes with `additionalProperties: false`, and keywords strict mode refuses are dropped — length limits
 * move into the description; `runTool` still enforces every constraint with the zod schema.
 */
export function toStrictJsonSchema(jsonSchema: Record<string, unknown>): Record<string, unknown> {
  return strictNode(jsonSchema) as Record<string, unknown>;
}

/**
 * A tool's input-side JSON Schema whose optional top-level properties also accept `null` (which `runTool`
 * reads as "absent"), for SDKs that check a model's arguments against the schema before the tool runs.
 */
export function withNullableOptionals(jsonSchema: Record<string, unknown>): Record<string, unknown> {
  if (!isObject(jsonSchema.properties)) return jsonSchema;
  const required = new Set(Array.isArray(jsonSchema.required) ? (jsonSchema.required as string[]) : []);
  const properties = Object.fromEntries(
    Object.entries(jsonSchema.properties).map(([name, child]) => [
      name,
      required.has(name) || !isObject(child) ? child : makeNullable(child),
    ]),
  );
  return { ...jsonSchema, properties };
}
