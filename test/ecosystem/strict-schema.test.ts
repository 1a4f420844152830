import { Ajv } from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSession, defineTool, workspaceTools } from '../../src/index.js';
import { createMcpServer } from '../../src/entries/mcp.js';
import { toStrictJsonSchema } from '../../src/session/strict-schema.js';

/**
 * OpenAI's published strict-mode rules (platform.openai.com/docs/guides/structured-outputs, "Supported schemas"),
 * written out here independently of the implementation's keyword list so the two check each other.
 */
const OPENAI_STRICT_KEYWORDS = new Set(
  'type properties required additionalProperties items enum const anyOf description title $ref $defs pattern format minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minItems maxItems'.split(
    ' ',
  ),
);

function strictViolations(schema: unknown, at = '#', depth = 0): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return [`${at}: not a schema object`];
  const node = schema as Record<string, unknown>;
  const problems: string[] = [];
  if (depth > 10) problems.push(`${at}: nested deeper than 10 levels`);
  if (depth === 0 && (node.type !== 'object' || 'anyOf' in node)) problems.push(`${at}: the root must be a plain object schema`);
  for (const key of Object.keys(node)) if (!OPENAI_STRICT_KEYWORDS.has(key)) problems.push(`${at}: keyword ${key} is not supported`);
  for (const key of ['maximum', 'minimum']) {
    const bound = node[key];
    if (typeof bound === 'number' && Math.abs(bound) >= Number.MAX_SAFE_INTEGER) problems.push(`${at}: ${key} ${bound}`);
  }
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (Array.isArray(node.enum) && types.includes('null') && !node.enum.includes(null)) problems.push(`${at}: nullable enum without null`);
  if (types.includes('object')) {
    if (node.additionalProperties !== false) problems.push(`${at}: additionalProperties must be false`);
    const properties = (node.properties ?? {}) as Record<string, unknown>;
    const required = (node.required ?? []) as string[];
    for (const name of Object.keys(properties)) if (!required.includes(name)) problems.push(`${at}: property ${name} is not required`);
    for (const [name, child] of Object.entries(properties))
      problems.push(...strictViolations(child, `${at}/properties/${name}`, depth + 1));
  }
  if (node.items !== undefined) problems.push(...strictViolations(node.items, `${at}/items`, depth + 1));
  if (Array.isArray(node.anyOf)) node.anyOf.forEach((child, i) => problems.push(...strictViolations(child, `${at}/anyOf/${i}`, depth + 1)));
  return problems;
}

async function mcpToolSchemas(): Promise<{ name: string; inputSchema: Record<string, unknown> }[]> {
  await using session = await createSession({ backend: 'memory' });
  const server = await createMcpServer(session);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  const { tools } = await client.listTools();
  await client.close();
  return tools as { name: string; inputSchema: Record<string, unknown> }[];
}

describe('strictJsonSchema', () => {
  it('the checker catches what OpenAI refuses (it is not vacuous)', () => {
    const loose = workspaceTools().find((t) => t.name === 'grep')!.jsonSchema;
    const problems = strictViolations(loose);
    expect(problems.join('\n')).toMatch(/\$schema/);
    expect(problems.join('\n')).toMatch(/additionalProperties must be false/);
    expect(problems.join('\n')).toMatch(/property glob is not required/);
    expect(problems.join('\n')).toMatch(/maximum 9007199254740991/);
    expect(problems.join('\n')).toMatch(/minLength is not supported/);
  });

  it('every workspace tool and every MCP tool (snapshot, restore, diff, export_patch) is valid under the strict rules and compiles in ajv', async () => {
    const ajv = new Ajv({ strict: true, allowUnionTypes: true });
    const schemas = [
      ...workspaceTools().map((t) => ({ name: t.name, strict: t.strictJsonSchema })),
      ...(await mcpToolSchemas()).map((t) => ({ name: `mcp:${t.name}`, strict: toStrictJsonSchema(t.inputSchema) })),
    ];
    // The 16 workspace tools, then the same 16 plus snapshot, restore, diff and export_patch as the MCP server
    // lists them (write_back is listed only for a session with host folders to write back to).
    expect(schemas.map((s) => s.name)).toContain('send_file');
    expect(schemas.map((s) => s.name)).toContain('mcp:export_patch');
    expect(schemas).toHaveLength(16 + 20);
    for (const { name, strict } of schemas) {
      expect(strictViolations(strict), name).toEqual([]);
      const validate = ajv.compile(strict);
      // What a strict model sends when it leaves every optional argument out: each one as null.
      const properties = strict.properties as Record<string, { type?: unknown }>;
      const allNull = Object.fromEntries(Object.keys(properties).map((key) => [key, null]));
      expect(validate({ ...allNull, extra: 1 }), name).toBe(false);
    }
  });

  it('keeps descriptions, turns optional into nullable, and moves length limits into words', () => {
    const tool = defineTool({
      name: 'probe',
      description: 'probe',
      parameters: z.object({
        path: z.string().min(1).describe('A path.'),
        mode: z.enum(['a', 'b']).optional(),
        count: z.number().int().positive().default(3),
        nested: z.object({ flag: z.boolean().optional() }).optional(),
      }),
      handler: () => ({ success: true, message: 'ok' }),
    });
    expect(tool.strictJsonSchema).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'A path. (at least 1 characters)' },
        mode: { type: ['string', 'null'], enum: ['a', 'b', null] },
        count: { type: ['integer', 'null'], exclusiveMinimum: 0 },
        nested: {
          type: ['object', 'null'],
          properties: { flag: { type: ['boolean', 'null'] } },
          required: ['flag'],
          additionalProperties: false,
        },
      },
      required: ['path', 'mode', 'count', 'nested'],
      additionalProperties: false,
    });
    expect(strictViolations(tool.strictJsonSchema)).toEqual([]);
  });
});

describe('runTool with strict-mode arguments', () => {
  it('reads null as absent: the default applies', async () => {
    await using session = await createSession({ backend: 'memory' });
    const write = workspaceTools().find((t) => t.name === 'write_file')!;
    const read = workspaceTools().find((t) => t.name === 'read_file')!;
    expect((await session.runTool(write, { path: 'a.txt', content: 'one\ntwo\n', mode: null })).success).toBe(true);
    const result = await session.runTool(read, { path: 'a.txt', offset: null, limit: null });
    expect(result.success).toBe(true);
    expect(result.message).toContain('two');
  });

  it('keeps null for a property that accepts it', async () => {
    await using session = await createSession({ backend: 'memory' });
    const seen: unknown[] = [];
    const tool = defineTool({
      name: 'nullable',
      description: 'x',
      parameters: z.object({ value: z.string().nullable() }),
      handler: ({ value }) => (seen.push(value), { success: true, message: 'ok' }),
    });
    expect((await session.runTool(tool, { value: null })).success).toBe(true);
    expect(seen).toEqual([null]);
  });

  it('refuses unknown keys, naming the allowed ones, and touches nothing', async () => {
    await using session = await createSession({ backend: 'memory' });
    const write = workspaceTools().find((t) => t.name === 'write_file')!;
    const result = await session.runTool(write, { path: 'a.txt', content: 'x', charset: 'utf8' });
    expect(result).toMatchObject({ success: false, code: 'EINVAL', rolledBack: false });
    expect(result.message).toContain('unknown parameter "charset"; allowed: path, content, mode, encoding');
    expect(await session.filesystem.exists('a.txt')).toBe(false);
    expect(session.snapshots).toHaveLength(0);
  });

  it('lets a schema with a catchall take extra keys', async () => {
    await using session = await createSession({ backend: 'memory' });
    const tool = defineTool({
      name: 'loose',
      description: 'x',
      parameters: z.looseObject({ a: z.string() }),
      handler: (params) => ({ success: true, message: JSON.stringify(params) }),
    });
    const result = await session.runTool(tool, { a: 'x', b: 1 });
    expect(result.success).toBe(true);
    expect(result.message).toContain('"b":1');
  });
});
