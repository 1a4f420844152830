import { z } from 'zod';
import type { Tool, ToolDefinition } from '../session/types.js';

/**
 * Defines a tool of the suite: the definition plus the JSON Schema of its parameters, computed by zod's own
 * converter (input side, so optional parameters are not listed as required).
 */
export function defineWorkspaceTool<Schema extends z.ZodType, T>(definition: ToolDefinition<Schema, T>): Tool<Schema, T> {
  return { ...definition, jsonSchema: z.toJSONSchema(definition.parameters, { io: 'input' }) as Record<string, unknown> };
}
