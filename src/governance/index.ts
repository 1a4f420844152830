export type { PolicyOperation, WorkspacePolicy } from './policy.js';
export { DEFAULT_PROTECT } from './protect.js';
export type { AuditActor, AuditEvent, AuditSink } from './audit-event.js';
export { memoryAuditSink, type MemoryAuditSink } from './memory-sink.js';
export { jsonlAuditSink, readAuditLog, type JsonlAuditSink } from './jsonl-sink.js';
export type { WatchEvent, WatchOptions } from '../workspace/watch-event.js';
