import { copyBytes } from '../workspace/bytes.js';
import type { S3Client } from '@aws-sdk/client-s3';
import type { BlobStore } from '../workspace/driver.js';
import { InvalidArgumentError } from '../workspace/errors.js';
import { resolveRetry, withRetry, type RetryOptions } from './retry.js';

/**
 * The S3 client's commands, loaded when first used: the SDK is an optional peer, and the `sessionfs` command
 * (one bundled file) must start without it unless `--s3` is given.
 */
let loadingSdk: Promise<typeof import('@aws-sdk/client-s3')> | undefined;
const sdk = (): Promise<typeof import('@aws-sdk/client-s3')> => (loadingSdk ??= import('@aws-sdk/client-s3'));

export interface S3BlobStoreOptions {
  /** The user's client: any S3-compatible endpoint (AWS, R2, MinIO, GCS interop). */
  client: S3Client;
  bucket: string;
  /** Key prefix, e.g. `team-a/` (a trailing `/` is added when missing). Default none. */
  prefix?: string;
  /** Bytes of blob content kept in the read cache (least recently used dropped first). Default 64 MiB. */
  cacheBytes?: number;
  /**
   * Retries of a request answered 5xx, 429 or not at all (a reset, a timeout): with backoff until the
   * deadline, then `StoreUnavailableError` (`EUNAVAILABLE`). Default: 30 s deadline, 10 s per attempt.
   */
  retry?: RetryOptions;
}

/** A `BlobStore` that also says how many requests it made, for cost accounting and benches. */
export interface S3BlobStore extends Required<BlobStore> {
  readonly requests: { get: number; put: number; head: number; delete: number; list: number };
}

const HASH = /^[0-9a-f]{64}$/;
/** How many hashes known to exist are remembered (saves a HEAD per repeated `has`). */
const KNOWN_HASHES = 100_000;

/**
 * Blobs in S3-compatible object storage under `prefix/blobs/ab/<sha256>`. Objects are immutable: a key is
 * written with `If-None-Match: *` (stored only when absent), and reads go through a bounded LRU cache, so
 * a blob read twice is fetched once. `@aws-sdk/client-s3` is an optional peer dependency: install it to use
 * this store (`sessionfs/s3`).
 */
export function s3BlobStore(options: S3BlobStoreOptions): S3BlobStore {
  const { client, bucket } = options;
  if (typeof bucket !== 'string' || bucket === '') throw new InvalidArgumentError('s3BlobStore needs a bucket name');
  const prefix = options.prefix === undefined || options.prefix === '' ? '' : options.prefix.replace(/\/*$/, '/');
  const cache = new ByteLru(options.cacheBytes ?? 64 * 1024 * 1024);
  const known = new Set<string>();
  const requests = { get: 0, put: 0, head: 0, delete: 0, list: 0 };
  const retry = resolveRetry(options.retry);
  // The SDK's own retries stop after 3 attempts and never time out a silent server: these run until a deadline.
  const send = <T>(what: string, command: { input: unknown }): Promise<T> =>
    withRetry(what, (abortSignal) => client.send(command as never, { abortSignal }) as Promise<T>, isTransient, retry);
  const keyOf = (hash: string): string => {
    if (!HASH.test(hash)) throw new InvalidArgumentError(`not a sha256 blob key: ${hash.slice(0, 80)}`);
    return `${prefix}blobs/${hash.slice(0, 2)}/${hash}`;
  };
  const remember = (hash: string): void => {
    if (known.size >= KNOWN_HASHES) known.delete(known.values().next().value as string);
    known.add(hash);
  };

  return {
    requests,
    async get(hash) {
      const cached = cache.get(hash);
      if (cached !== undefined) return copyBytes(cached);
      const Key = keyOf(hash);
      requests.get += 1;
      try {
        const bytes = await withRetry(
          `reading blob ${hash}`,
          async (abortSignal) => {
            const response = await client.send(new (await sdk()).GetObjectCommand({ Bucket: bucket, Key }), { abortSignal });
            return (response.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
          },
          isTransient,
          retry,
        );
        cache.set(hash, bytes);
        remember(hash);
        return copyBytes(bytes);
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
    },
    async put(hash, bytes) {
      const Key = keyOf(hash);
      requests.put += 1;
      try {
        await send(`storing blob ${hash}`, new (await sdk()).PutObjectCommand({ Bucket: bucket, Key, Body: bytes, IfNoneMatch: '*' }));
      } catch (error) {
        // Already there: content-addressed, so the stored object is these very bytes.
        if (!isPreconditionFailed(error)) throw error;
      }
      remember(hash);
    },
    async has(hash) {
      if (known.has(hash) || cache.get(hash) !== undefined) return true;
      const Key = keyOf(hash);
      requests.head += 1;
      try {
        await send(`looking up blob ${hash}`, new (await sdk()).HeadObjectCommand({ Bucket: bucket, Key }));
        remember(hash);
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    },
    async delete(hash) {
      const Key = keyOf(hash);
      requests.delete += 1;
      known.delete(hash);
      cache.delete(hash);
      await send(`deleting blob ${hash}`, new (await sdk()).DeleteObjectCommand({ Bucket: bucket, Key }));
    },
    async *list() {
      let token: string | undefined;
      do {
        requests.list += 1;
        const page = await send<{ Contents?: { Key?: string }[]; IsTruncated?: boolean; NextContinuationToken?: string }>(
          'listing blobs',
          new (await sdk()).ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}blobs/`, ContinuationToken: token }),
        );
        for (const object of page.Contents ?? []) {
          const hash = object.Key?.slice(object.Key.lastIndexOf('/') + 1);
          if (hash !== undefined && HASH.test(hash)) yield hash;
        }
        token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
      } while (token !== undefined);
    },
  };
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/** Worth another attempt: a server error or throttling, or no answer (a reset, a refused or silent connection). */
function isTransient(error: unknown): boolean {
  const status = statusOf(error);
  if (status !== undefined) return status >= 500 || status === 429 || status === 408;
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  if (
    typeof code === 'string' &&
    /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|ECONNABORTED|EHOSTUNREACH|ENETUNREACH)$/.test(code)
  )
    return true;
  return name === 'TimeoutError' || name === 'AbortError' || name === 'RequestTimeout';
}

function isMissing(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  return statusOf(error) === 404 || name === 'NoSuchKey' || name === 'NotFound';
}

function isPreconditionFailed(error: unknown): boolean {
  return statusOf(error) === 412 || (error as { name?: string })?.name === 'PreconditionFailed';
}

/** Least-recently-used byte cache: a Map keeps insertion order, and a hit is re-inserted at the end. */
class ByteLru {
  readonly #limit: number;
  readonly #entries = new Map<string, Uint8Array>();
  #bytes = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: string): Uint8Array | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: string, value: Uint8Array): void {
    if (value.byteLength > this.#limit / 4) return; // one huge blob must not flush everything else
    this.delete(key);
    this.#entries.set(key, value);
    this.#bytes += value.byteLength;
    while (this.#bytes > this.#limit) {
      const [oldest, bytes] = this.#entries.entries().next().value as [string, Uint8Array];
      this.#entries.delete(oldest);
      this.#bytes -= bytes.byteLength;
    }
  }

  delete(key: string): void {
    const value = this.#entries.get(key);
    if (value === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= value.byteLength;
  }
}
