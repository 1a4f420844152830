import { auditRecorder, type AuditRecorder, type AuditSink } from '../governance/audit.js';
import { Governance } from '../governance/governance.js';
import type { WorkspacePolicy } from '../governance/policy.js';
import { Protection, validateProtect } from '../governance/protect.js';
import { WatchLayer } from '../governance/watch-layer.js';
import { BlobSnapshotter } from '../snapshots/blob-snapshotter.js';
import { assertDriver, type BackendDriver, type BlobStore, type Snapshotter } from './driver.js';
import { InvalidArgumentError } from './errors.js';
import { resolveLimits, type WorkspaceLimits } from './limits.js';
import { withFallbackVersions } from './versions.js';

/** How a workspace built on a driver is governed: see {@link createWorkspace}. */
export interface CreateWorkspaceOptions {
  readOnly?: boolean;
  limits?: Partial<WorkspaceLimits>;
  /** Where the default snapshotter keeps file contents and manifests (unused when the driver has `snapshots`). Default: memory. */
  blobs?: BlobStore;
  /** What may be touched, how much, and what needs confirming: see docs/governance.md. Checked before any change. */
  policy?: WorkspacePolicy;
  audit?: AuditSink[]; // every operation, its actor, outcome and duration (never contents): docs/governance.md
  /**
   * Picomatch globs of what the host provides read-only (the directory a pattern matches and all below it):
   * every mutation there is `PolicyError` (`EPERM`), and restores leave it as it is. Default
   * `DEFAULT_PROTECT` (`.git`, `.hg`, `.svn`, `.jj` anywhere); `[]` turns it off. What the workspace itself
   * creates there stays ordinary content. See docs/security-model.md.
   */
  protect?: readonly string[];
}

/**
 * What a workspace built by `createWorkspace` runs on: its driver under the layers its options ask for,
 * composed here and nowhere else, each over the one below it:
 *
 *     own driver ─ versions ─┬─ watch feed            (what the protocol mutates through: `driver`)
 *                            ├─ the policy's view     (what reads, walks, glob and grep see: `reader`)
 *                            └─ snapshotter           (the driver's own, or content-addressed blobs)
 *
 * beside them the policy and `protect` rules (which read the own driver: they need no versions layer), and
 * the audit recorder the workspace's methods record themselves with. A layer over the driver is a
 * `driverWith` wrapper made once here; nothing is added to the workspace instance.
 */
export interface WorkspaceLayers {
  /** The driver as given: what the policy and `protect` read through, what `fork` and `markChanged` delegate to. */
  readonly own: BackendDriver;
  /** `own` with `stat().version` for drivers that keep none: what snapshots and restores run through. */
  readonly versioned: BackendDriver;
  /** `versioned` reporting its mutations to the watchers: what the protocol mutates through. */
  readonly driver: BackendDriver;
  /** `versioned` as the policy lets reads see it (denied entries absent from lists and walks). */
  readonly reader: BackendDriver;
  readonly snapshotter: Snapshotter;
  readonly governance: Governance;
  readonly protection: Protection;
  readonly watch: WatchLayer;
  readonly audit: AuditRecorder;
  readonly limits: Readonly<WorkspaceLimits>;
  readonly readOnly: boolean;
}

/** The layers of a workspace over `driver`, its options validated (`InvalidArgumentError` otherwise). */
export function composeLayers(driver: BackendDriver, options: CreateWorkspaceOptions): WorkspaceLayers {
  if (options === null || typeof options !== 'object') throw new InvalidArgumentError('options must be an object');
  assertDriver(driver);
  const limits = resolveLimits(options.limits);
  const governance = new Governance(driver, options.policy);
  const protection = new Protection(driver, validateProtect(options.protect));
  const audit = auditRecorder(options.audit);
  const versioned = withFallbackVersions(driver);
  const watch = new WatchLayer(versioned);
  return {
    own: driver,
    versioned,
    driver: watch.driver,
    reader: governance.view(versioned),
    snapshotter: versioned.snapshots ?? new BlobSnapshotter(versioned, options.blobs),
    governance,
    protection,
    watch,
    audit,
    limits,
    readOnly: options.readOnly === true,
  };
}
