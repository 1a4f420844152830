import { auditWorkspace } from './audited.js';
import type { AuditSink, SelfAudit } from './audit.js';
import { watchWorkspace } from './watched.js';

export type { AuditSink, SelfAudit } from './audit.js';
export { SELF_AUDITED } from './audited.js';

/**
 * What the shared layer adds to every workspace it builds, once, whatever the backend: `watch()`, then the
 * audit around every protocol method (so a restore's own change detection is not audited twice). Returns how
 * the self-audited methods (`SELF_AUDITED`) record themselves.
 */
export function governWorkspace(workspace: object, options: { audit?: AuditSink[] }): SelfAudit {
  watchWorkspace(workspace as Parameters<typeof watchWorkspace>[0]);
  return auditWorkspace(workspace, options.audit);
}
