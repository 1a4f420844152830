export type { PolicyOperation, WorkspacePolicy } from './policy.js';
export { DEFAULT_PROTECT } from './protect.js';
export { memoryAuditSink, type AuditActor, type AuditEvent, type AuditSink, type MemoryAuditSink } from './audit.js';
export { jsonlAuditSink, readAuditLog, type JsonlAuditSink } from './jsonl-sink.js';
export type { WatchEvent, WatchOptions } from './watch.js';
