import { z } from 'zod';
import { InvalidArgumentError } from '../workspace/errors.js';
import { toStrictJsonSchema } from './strict-schema.js';
import type { Tool, ToolDefinition } from './types.js';

/** Tool names as the model APIs and MCP accept them. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

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
  if (!(parameters instanceof z.ZodType)) throw new InvalidArgumentError(`tool ${name}: parameters must be a zod schema`);
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
