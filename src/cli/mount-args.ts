import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { HostSourceSchema } from '../sources/schema.js';

/**
 * One `--mount` of the command line: a host source (a host directory or file, where it shows, and what
 * applies to it), hydrated into the workspace, or mounted beside `--root` in a mount table.
 */
export interface MountArgument {
  hostPath: string;
  /** Where it shows in the workspace; default its base name. */
  path?: string;
  include?: string[];
  exclude?: string[];
  maxBytes?: number;
  /** Never written back (`:ro`). */
  readOnly?: boolean;
  /** `false` (`--include-ignored`): copy what its `.gitignore` files ignore too. */
  gitignore?: boolean;
}

/** Raised for a malformed mount; the command line turns it into a usage error. */
export class MountSyntaxError extends Error {
  override name = 'MountSyntaxError';
}

/**
 * `--mount SRC[:/PATH][:ro|:rw]`: a host path, optionally where it shows (an absolute workspace path) and
 * its access (`ro`: never written back). `SRC` alone is the old form (shown under its base name). A host
 * path holding `:/` or ending in `:ro`/`:rw` is given in a `--mount-config` file instead.
 */
export function parseMountValue(value: string): MountArgument {
  let rest = value;
  let readOnly: boolean | undefined;
  const access = /:(ro|rw)$/.exec(rest);
  if (access !== null) {
    readOnly = access[1] === 'ro';
    rest = rest.slice(0, -3);
  }
  let path: string | undefined;
  const at = rest.lastIndexOf(':/');
  if (at > 0) {
    path = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  if (rest.trim() === '') throw new MountSyntaxError(`--mount needs a non-empty host path, got ${JSON.stringify(value)}`);
  return { hostPath: rest, ...(path === undefined ? {} : { path }), ...(readOnly === true ? { readOnly } : {}) };
}

/**
 * A `--mount-config` file: JSON, either a list of mounts or `{ "mounts": [...], "allow": [...] }`. A mount
 * is a host source, `{ hostPath, path?, include?, exclude?, maxBytes?, readOnly?, gitignore? }` (unknown keys refused); relative
 * host paths (and `allow` roots) are relative to the file's directory.
 */
export function readMountConfig(file: string): { mounts: MountArgument[]; allow: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new MountSyntaxError(`cannot read --mount-config ${JSON.stringify(file)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new MountSyntaxError(`--mount-config ${JSON.stringify(file)} is not JSON: ${(error as Error).message}`);
  }
  const config = Array.isArray(data) ? { mounts: data, allow: [] as unknown } : (data as { mounts?: unknown; allow?: unknown } | null);
  if (config === null || typeof config !== 'object' || !Array.isArray(config.mounts))
    throw new MountSyntaxError(`--mount-config ${JSON.stringify(file)} must hold a list of mounts or { "mounts": [...], "allow": [...] }`);
  const allow = config.allow ?? [];
  if (!Array.isArray(allow) || allow.some((root) => typeof root !== 'string' || root === ''))
    throw new MountSyntaxError(`"allow" in --mount-config ${JSON.stringify(file)} must be a list of host paths`);
  const base = dirname(resolve(file));
  const at = (path: string): string => (isAbsolute(path) ? path : resolve(base, path));
  const mounts = config.mounts.map((entry, index) => {
    const parsed = HostSourceSchema.omit({ followSymlinks: true }).safeParse(entry);
    if (!parsed.success)
      throw new MountSyntaxError(
        `mounts[${index}] in --mount-config ${JSON.stringify(file)}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'mount'}: ${issue.message}`).join('; ')}`,
      );
    return { ...parsed.data, hostPath: at(parsed.data.hostPath) } as MountArgument;
  });
  return { mounts, allow: (allow as string[]).map(at) };
}
