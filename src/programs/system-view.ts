import * as fs from 'node:fs';
import { dirname, join } from 'node:path';

/** The sandbox's user: not root, so the program holds no capability even inside its namespaces. */
export const SANDBOX_UID = 1000;
export const SANDBOX_USER = 'user';

/** Top-level system directories shown read-only (as links where the host has merged them into /usr). */
export const DEFAULT_SYSTEM_PATHS: readonly string[] = Object.freeze(['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']);

/**
 * What of the host's /etc a program needs (dynamic linker cache, Debian's alternatives links, CA
 * certificates, time zone, service names), never the rest (no shadow, no host users, no machine id).
 */
export const DEFAULT_ETC_ENTRIES: readonly string[] = Object.freeze([
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'pki',
  'localtime',
  'timezone',
  'protocols',
  'services',
  'mime.types',
  'os-release',
]);

/** The files of the sandbox's own /etc, written once per process. */
function etcFiles(network: boolean): Record<string, string> {
  return {
    passwd: `root:x:0:0:root:/root:/bin/sh\n${SANDBOX_USER}:x:${SANDBOX_UID}:${SANDBOX_UID}:${SANDBOX_USER}:/tmp:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\n${SANDBOX_USER}:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`,
    hosts: '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n',
    hostname: 'sandbox\n',
    'nsswitch.conf': `passwd: files\ngroup: files\nshadow: files\nhosts: files${network ? ' dns' : ''}\n`,
  };
}

/** An entry of the sandbox's /etc and where it comes from (`optional`: shown only when the host has it). */
export interface EtcSource {
  source: string;
  target: string;
  optional: boolean;
}

/**
 * bwrap arguments for the system part of the view: `systemPaths` read-only (a host link such as `/bin ->
 * usr/bin` is recreated as the same link), the directory holding this Node.js when it lives elsewhere (a
 * program may run `node`), and an empty /etc; `etc` lists what goes into it: the files of `etcDir` plus the
 * host's `etcEntries` (the engine decides how each is shown).
 */
export function systemArgs(options: { systemPaths: readonly string[]; etcEntries: readonly string[]; etcDir: string; network: boolean }): {
  args: string[];
  etc: EtcSource[];
  path: string;
} {
  const args: string[] = [];
  const shown = new Set<string>();
  for (const path of options.systemPaths) addPath(args, path, shown);
  // A Node.js installed outside the system directories (nvm, /opt) is shown where it lives, so `node` runs.
  const nodeBin = dirname(process.execPath);
  const extraPath: string[] = [];
  if (![...shown].some((path) => nodeBin === path || nodeBin.startsWith(`${path}/`))) {
    addPath(args, dirname(nodeBin), shown);
    extraPath.push(nodeBin);
  }
  args.push('--dir', '/etc');
  const etc: EtcSource[] = Object.keys(etcFiles(options.network)).map((name) => ({
    source: join(options.etcDir, name),
    target: `/etc/${name}`,
    optional: false,
  }));
  for (const name of [...options.etcEntries, ...(options.network ? ['resolv.conf'] : [])])
    etc.push({ source: `/etc/${name}`, target: `/etc/${name}`, optional: true });
  const path = [...extraPath, '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].join(':');
  return { args, etc, path };
}

function addPath(args: string[], path: string, shown: Set<string>): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(path);
  } catch {
    return;
  }
  if (stat.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(path), path);
  else if (stat.isDirectory()) {
    args.push('--ro-bind', path, path);
    shown.add(path);
  }
}

/**
 * Writes the sandbox's /etc files into `dir` (both variants: with and without network name lookups), and
 * the empty file shown in place of a file the policy hides.
 */
export function writeEtc(dir: string): { none: string; host: string; empty: string } {
  const made = { none: join(dir, 'etc-none'), host: join(dir, 'etc-host'), empty: join(dir, 'empty') };
  fs.writeFileSync(made.empty, '', { mode: 0o444 });
  for (const [key, network] of [
    ['none', false],
    ['host', true],
  ] as const) {
    fs.mkdirSync(made[key]);
    for (const [name, text] of Object.entries(etcFiles(network))) fs.writeFileSync(join(made[key], name), text, { mode: 0o644 });
  }
  return made;
}
