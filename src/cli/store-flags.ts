import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { checkSessionId } from '../store/session-names.js';
import { UsageError } from './usage-error.js';

/** Where stored sessions live: the local store (a directory) or Postgres heads with S3 blobs. */
export type StoreFlags =
  | { kind: 'local'; dir: string; /** The directory came from the default (XDG), not `--store-dir`. */ defaulted: boolean }
  | { kind: 'postgres'; url: string; bucket: string; prefix?: string; endpoint?: string };

export interface StoreFlagValues {
  'store-dir'?: string | undefined;
  store?: string | undefined;
  s3?: string | undefined;
  's3-endpoint'?: string | undefined;
}

/**
 * The store the flags name. Default the local store in `$XDG_STATE_HOME/sessionfs` (the XDG base directory
 * spec's place for state that outlives a process; a relative `XDG_STATE_HOME` is ignored, as the spec says),
 * else `~/.local/state/sessionfs`. `--store postgres://…` needs `--s3 s3://bucket[/prefix]` for the blobs;
 * `--s3-endpoint URL` points the S3 client at an S3-compatible server (path-style requests). Credentials and
 * region come from the AWS SDK's usual sources (`AWS_ACCESS_KEY_ID`, `AWS_REGION`, `~/.aws`).
 */
export function storeFlags(values: StoreFlagValues, env: NodeJS.ProcessEnv = process.env): StoreFlags {
  const { 'store-dir': dir, store, s3, 's3-endpoint': endpoint } = values;
  if (dir !== undefined && store !== undefined) throw new UsageError('--store-dir and --store name two stores: pick one');
  if (dir !== undefined && dir.trim() === '') throw new UsageError('--store-dir needs a non-empty path');
  if (store === undefined) {
    if (s3 !== undefined) throw new UsageError('--s3 holds the blobs of a --store postgres://… store: give --store too');
    if (endpoint !== undefined) throw new UsageError('--s3-endpoint goes with --store and --s3');
    return dir === undefined ? { kind: 'local', dir: defaultStoreDir(env), defaulted: true } : { kind: 'local', dir, defaulted: false };
  }
  if (!/^postgres(ql)?:\/\/./.test(store))
    throw new UsageError(`--store must be a postgres://… connection URL, got ${JSON.stringify(redactUrl(store))}`);
  if (s3 === undefined) throw new UsageError('--store keeps heads in Postgres and the contents in S3: give --s3 s3://bucket/prefix');
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(s3);
  if (match === null) throw new UsageError(`--s3 must be s3://bucket or s3://bucket/prefix, got ${JSON.stringify(s3)}`);
  const prefix = match[2]?.replace(/\/+$/, '');
  if (endpoint !== undefined && !/^https?:\/\/./.test(endpoint))
    throw new UsageError(`--s3-endpoint must be an http(s):// URL, got ${JSON.stringify(endpoint)}`);
  return {
    kind: 'postgres',
    url: store,
    bucket: match[1] as string,
    ...(prefix === undefined || prefix === '' ? {} : { prefix }),
    ...(endpoint === undefined ? {} : { endpoint }),
  };
}

export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME;
  const base = state !== undefined && isAbsolute(state) ? state : join(env.HOME ?? homedir(), '.local', 'state');
  return join(base, 'sessionfs');
}

/** A session name from the command line: what a store takes, or a usage error naming the flag. */
export function sessionName(value: string, flag: string): string {
  try {
    return checkSessionId(value, flag);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** A connection URL as it may be shown: without its password. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}
