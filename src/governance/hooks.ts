import { auditWorkspace } from './audited.js';
import type { AuditSink } from './audit.js';
import { watchWorkspace } from './watched.js';

export type { AuditSink } from './audit.js';

/**
 * What the shared layer adds to every workspace it builds, once, whatever the backend: `watch()`, then the
 * audit around every protocol method (so a restore's own change detection is not audited twice).
 */
export function governWorkspace(workspace: object, options: { audit?: AuditSink[] }): void {
  watchWorkspace(workspace as Parameters<typeof watchWorkspace>[0]);
  auditWorkspace(workspace, options.audit);
}
