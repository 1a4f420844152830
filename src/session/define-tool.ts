import { z } from 'zod';
import { InvalidArgumentError } from '../workspace/errors.js';
import { toStrictJsonSchema } from './strict-schema.js';
import type { Tool, ToolDefinition } from './types.js';

/** Tool names as the model APIs and MCP accept them. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A zod 4 schema from any copy of zod 4 (the application's own, or `zod/v4`): what `_zod` marks. */
function isZod4Schema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && typeof (value as { _zod?: { def?: unknown } })._zod?.def === 'object';
}

/** Why `parameters` is refused, saying what to do when it is a zod 3 schema. */
function notZod4(value: unknown): string {
  const zod3 =
    typeof value === 'object' && value !== null && '_def' in value && typeof (value as { safeParse?: unknown }).safeParse === 'function';
  return zod3
    ? 'parameters is a zod 3 schema; sessionfs needs zod 4 (npm install zod@4, then import { z } from "zod")'
    : 'parameters must be a zod 4 schema (import { z } from "zod", zod@4)';
}

/**
 * Defines a tool: the definition plus the JSON Schema of its parameters, produced by zod's own converter for
 * the *input* side (what a model sends: fields with defaults are optional), and its OpenAI strict-mode form.
 * Every tool gets both here, so tools added later need nothing of their own.
 */
export function defineTool<Schema extends z.ZodType, T = unknown>(definition: ToolDefinition<Schema, T>): Tool<Schema, T> {
  if (typeof definition !== 'object' || definition === null) throw new InvalidArgumentError('defineTool needs a definition object');
  const { name, description, parameters, handler, annotations } = definition;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    throw new InvalidArgumentError(`tool name must be 1-64 letters, digits, '_' or '-', got ${JSON.stringify(name)}`);
  }
  if (typeof description !== 'string') throw new InvalidArgumentError(`tool ${name}: description must be a string`);
  if (!isZod4Schema(parameters)) throw new InvalidArgumentError(`tool ${name}: ${notZod4(parameters)}`);
  if (typeof handler !== 'function') throw new InvalidArgumentError(`tool ${name}: handler must be a function`);
  let jsonSchema: Record<string, unknown>;
  try {
    jsonSchema = z.toJSONSchema(parameters, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    throw new InvalidArgumentError(
      `tool ${name}: parameters cannot be expressed as JSON Schema (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const tool: Tool<Schema, T> = { name, description, parameters, handler, jsonSchema, strictJsonSchema: toStrictJsonSchema(jsonSchema) };
  if (annotations !== undefined) tool.annotations = Object.freeze({ ...annotations });
  return tool;
}
