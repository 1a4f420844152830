import { InvalidArgumentError } from '../workspace/errors.js';
import type { ExecLimits, ExecOptions } from './types.js';

const OPTION_NAMES = new Set(['cwd', 'env', 'stdin', 'timeoutMs', 'signal', 'network', 'maxOutputBytes']);
const LIMIT_NAMES = new Set(['fileBytes', 'processes', 'cpuSeconds', 'changedBytes', 'changedEntries']);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The command as an argv (a string runs in `bash -c`) and the options, every one checked; unknown ones refused. */
export function validateExecOptions(command: unknown, raw: unknown): { argv: string[]; options: ExecOptions } {
  let argv: string[];
  if (typeof command === 'string') {
    if (command.trim() === '' || command.includes('\0'))
      throw new InvalidArgumentError('exec: command must be a non-empty string without NUL');
    argv = ['bash', '-c', command];
  } else if (Array.isArray(command) && command.length > 0 && command.every((arg) => typeof arg === 'string' && !arg.includes('\0'))) {
    if (command[0] === '') throw new InvalidArgumentError('exec: the program name must not be empty');
    argv = [...(command as string[])];
  } else {
    throw new InvalidArgumentError('exec: command must be a string (run by bash -c) or a non-empty list of strings (argv)');
  }
  const options = (raw ?? {}) as ExecOptions;
  if (typeof options !== 'object' || Array.isArray(options)) throw new InvalidArgumentError('exec: options must be an object');
  for (const key of Object.keys(options))
    if (!OPTION_NAMES.has(key)) throw new InvalidArgumentError(`exec: unknown option ${JSON.stringify(key)}`);
  if (options.cwd !== undefined && typeof options.cwd !== 'string') throw new InvalidArgumentError('exec: cwd must be a workspace path');
  if (options.env !== undefined) {
    if (typeof options.env !== 'object' || options.env === null || Array.isArray(options.env))
      throw new InvalidArgumentError('exec: env must be an object of strings');
    for (const [name, value] of Object.entries(options.env)) {
      if (!ENV_NAME.test(name)) throw new InvalidArgumentError(`exec: env: ${JSON.stringify(name)} is not a variable name`);
      if (typeof value !== 'string' || value.includes('\0'))
        throw new InvalidArgumentError(`exec: env.${name} must be a string without NUL`);
    }
    options.env = { ...options.env };
  }
  if (options.stdin !== undefined && typeof options.stdin !== 'string' && !(options.stdin instanceof Uint8Array)) {
    throw new InvalidArgumentError('exec: stdin must be a string or a Uint8Array');
  }
  positive(options.timeoutMs, 'timeoutMs');
  positive(options.maxOutputBytes, 'maxOutputBytes');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InvalidArgumentError('exec: signal must be an AbortSignal');
  if (options.network !== undefined && options.network !== 'none' && options.network !== 'host') {
    throw new InvalidArgumentError("exec: network must be 'none' or 'host'");
  }
  const copy: ExecOptions = { ...options };
  // Copied: the caller may change its buffer while the program runs.
  if (options.stdin instanceof Uint8Array) copy.stdin = new Uint8Array(options.stdin);
  return { argv, options: copy };
}

export function validateLimits(raw: unknown): ExecLimits {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InvalidArgumentError('exec limits must be an object');
  for (const key of Object.keys(raw))
    if (!LIMIT_NAMES.has(key)) throw new InvalidArgumentError(`exec limits: unknown limit ${JSON.stringify(key)}`);
  const limits = raw as ExecLimits;
  positive(limits.fileBytes, 'limits.fileBytes');
  positive(limits.processes, 'limits.processes');
  positive(limits.cpuSeconds, 'limits.cpuSeconds');
  positive(limits.changedBytes, 'limits.changedBytes');
  positive(limits.changedEntries, 'limits.changedEntries');
  return { ...limits };
}

function positive(value: unknown, name: string): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidArgumentError(`exec: ${name} must be a positive whole number, got ${String(value)}`);
  }
}
