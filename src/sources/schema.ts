import { z } from 'zod';
import { InvalidArgumentError } from '../workspace/errors.js';
import type { Progress } from '../workspace/progress.js';

/** Keys earlier versions took, refused with what replaces them (a renamed key must not be silently dropped). */
const RENAMED_KEYS: Readonly<Record<string, string>> = { mountPath: '`mountPath` is now `path` (where the source lands in the workspace)' };

/**
 * One host source: a host folder (or file) copied into a workspace by hydration. Unknown keys are refused:
 * a misspelt `exclude` must not silently pull in what it meant to leave out.
 */
export const HostSourceSchema = z.strictObject(
  {
    /** A host path, absolute or relative to the working directory. It must resolve inside an allowed root. */
    hostPath: z
      .string()
      .min(1, 'hostPath must not be empty')
      .refine((value) => !value.includes('\0'), 'hostPath must not contain NUL'),
    /** Where the source lands in the workspace; default the base name of `hostPath` as given. `/` is the root. */
    path: z.string().optional(),
    /** picomatch globs (`dot: true`) against the path relative to `hostPath`; only matching files are copied. */
    include: z.array(z.string().min(1)).optional(),
    /** picomatch globs (`dot: true`) against the path relative to `hostPath`; exclude wins over include. */
    exclude: z.array(z.string().min(1)).optional(),
    /** Most bytes this source may pull in; over it the whole hydration fails and nothing is written. */
    maxBytes: z.number().int().nonnegative().optional(),
    /** Follow symlinks whose targets lie inside the allowed roots. Default false: links are skipped. */
    followSymlinks: z.boolean().optional(),
    /** Never written to by `session.writeBack()`. Default false. */
    readOnly: z.boolean().optional(),
    /**
     * Version-control directories (`.git`, `.hg`, `.svn`, `.jj`) are skipped (and listed in `skipped`) unless
     * this is `'read-only'`: then they are copied in and protected, read-only to every tool, the shell and
     * restores (see docs/security-model.md). A `.git` file (a worktree's or submodule's pointer) is always skipped.
     */
    includeGit: z.literal('read-only').optional(),
    /**
     * Leave out what the source's `.gitignore` files ignore, by git's rules (nested files, negations,
     * directory patterns; with the working tree's outer `.gitignore` files when the source is a folder inside
     * one): each ignored directory is one entry of `skipped`, nothing below it is read. Default true; `false`
     * copies ignored files too (the CLI's `--include-ignored`).
     */
    gitignore: z.boolean().optional(),
  },
  {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const renamed = issue.keys.filter((key) => RENAMED_KEYS[key] !== undefined);
      return renamed.length === 0 ? undefined : renamed.map((key) => RENAMED_KEYS[key]).join('; ');
    },
  },
);

export type HostSource = z.input<typeof HostSourceSchema>;

/** `sources` checked against the schema (`[]` when undefined); `InvalidArgumentError` naming each issue otherwise. */
export function parseSources(sources: unknown): z.output<typeof HostSourceSchema>[] {
  const parsed = HostSourceSchema.array().optional().safeParse(sources);
  if (!parsed.success) {
    throw new InvalidArgumentError(
      `invalid sources: ${parsed.error.issues.map((issue) => `${['sources', ...issue.path].join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  return parsed.data ?? [];
}

/** Hydration's progress event: the one `Progress` shape (phase `write`, `done` = files) plus byte counts. */
export interface HydrateProgress extends Progress {
  /** Files written so far (the same as `done`). */
  files: number;
  /** Bytes written so far. */
  bytes: number;
  /** The workspace path just written. */
  path: string;
}

export interface HydrateOptions {
  /** Host directories sources may read from. Required: with none, hydration refuses. */
  allowedHostRoots: readonly string[];
  /**
   * Called after each file is written, then once more with `total === done` when all are. A throw fails the
   * hydration (and rolls it back).
   */
  onProgress?: (progress: HydrateProgress) => void;
  /** Aborting fails the hydration and rolls it back. */
  signal?: AbortSignal;
}

export interface HydrateResult {
  /** Files written. A path written by several sources counts once. */
  files: number;
  /** Bytes written. */
  bytes: number;
  /**
   * What was left out, with why (workspace paths only). Excluded paths are not listed; ignored ones are (a
   * directory `.gitignore` ignores is one entry, nothing below it).
   */
  skipped: { path: string; reason: string }[];
}
