// `sessionfs/governance`: audit sinks, the audit log reader and the default protected paths (the policy
// itself is an option of createWorkspace and createSession).
export * from '../governance/index.js';
