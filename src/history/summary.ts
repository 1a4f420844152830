/** How long a shown value may be before it is cut. */
const MAX_VALUE = 80;
/** How long a whole summary may be. */
const MAX_SUMMARY = 240;

/** Parameter names whose strings are file contents (or could be): shown by size only. */
const CONTENT_KEYS = new Set([
  'content',
  'contents',
  'old_string',
  'new_string',
  'content_base64',
  'text',
  'data',
  'stdin',
  'bytes',
  'patch',
]);

/**
 * A tool call's arguments in short, for a history line: `path=src/a.ts content=<120 chars, 4 lines>`.
 * Strings that may be file contents, and any string with a newline, are shown by size; others are cut at
 * 80 characters; nested objects and arrays by their size. Never the content itself.
 */
export function summarizeArguments(params: unknown): string {
  if (params === undefined || params === null) return '';
  if (typeof params !== 'object' || Array.isArray(params)) return shown('', params);
  const parts = Object.entries(params as Record<string, unknown>)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => `${key}=${shown(key, value)}`);
  return cut(parts.join(' '), MAX_SUMMARY);
}

/** An orchestrator's protocol call in short: `write src/a.ts (12 bytes)`, `rename a → b`. */
export function summarizeMethod(method: string, args: readonly unknown[]): string {
  const paths = args.filter((arg): arg is string => typeof arg === 'string');
  const [first, second] = paths;
  if ((method === 'write' || method === 'writeBytes') && first !== undefined) {
    const content = args[1];
    const size = typeof content === 'string' ? Buffer.byteLength(content) : content instanceof Uint8Array ? content.byteLength : undefined;
    return `${method} ${cut(first, MAX_VALUE)}${size === undefined ? '' : ` (${size} bytes)`}`;
  }
  if ((method === 'rename' || method === 'copy') && first !== undefined && second !== undefined)
    return `${method} ${cut(first, MAX_VALUE)} → ${cut(second, MAX_VALUE)}`;
  if (method === 'writeFiles' && Array.isArray(args[0])) return `writeFiles (${args[0].length} entries)`;
  if (method === 'restore') {
    const id = (args[0] as { id?: unknown } | undefined)?.id;
    return typeof id === 'string' ? `restore ${id}` : 'restore';
  }
  return first === undefined ? method : `${method} ${cut(first, MAX_VALUE)}`;
}

function shown(key: string, value: unknown): string {
  if (typeof value === 'string') {
    const lines = value.split('\n').length;
    if (CONTENT_KEYS.has(key) || lines > 1) return `<${value.length} chars${lines > 1 ? `, ${lines} lines` : ''}>`;
    return JSON.stringify(cut(value, MAX_VALUE));
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.length} items]`;
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`;
  if (typeof value === 'object' && value !== null) return `{${Object.keys(value).length} keys}`;
  return typeof value;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
