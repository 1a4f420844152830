import type { S3Client } from '@aws-sdk/client-s3';

export function findPostgres(): string | undefined;
export function postgresUnavailable(): string | undefined;
export interface RunningPostgres {
  connectionString: string;
  /** `pg_ctl restart -m fast`: every connection is terminated. */
  restart(): void;
  /** Stops the server, keeping its data, until `up()`. */
  down(): void;
  up(): void;
  stop(): void;
}
export function startPostgres(): Promise<RunningPostgres>;
export interface RunningS3 {
  client(): S3Client;
  endpoint: string;
  directory: string;
  stop(): Promise<void>;
}
export function startS3(bucket?: string): Promise<RunningS3>;
