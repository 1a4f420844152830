import type { ExportResult } from '../export/export-plan.js';
import type { WriteBackOptions } from '../export/write-back.js';
import type { HydratedSession } from '../session/index.js';
import type { SkippedPath } from '../workspace/types.js';

/** The server's session, how its work is written back, and what ends it. */
export interface ServeSession {
  session: HydratedSession;
  /** Writes the changes back to the writable mounts (what `--write-back` does at exit). */
  writeBack(options: WriteBackOptions): Promise<ExportResult>;
  /** What hydrating the mounts left out, when the session's own `hydration` does not say (a mount table). */
  skipped?: readonly SkippedPath[];
  /** Host directories of workspaces made here (temp roots, git dirs): never shown to the model. */
  hostDirs: readonly string[];
  /** Disposes the session and every workspace made for it. */
  dispose(): Promise<void>;
}
