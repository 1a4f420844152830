import { InvalidArgumentError } from './errors.js';

/**
 * A method's options argument: `undefined` and `null` count as absent (what JSON and strict-mode models send
 * for it), a plain object passes, anything else (a number, a string, an array) is `EINVAL`.
 */
export function optionsObject<O extends object>(value: O | null | undefined, operation: string): O {
  if (value === undefined || value === null) return {} as O;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`${operation} options must be an object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  }
  return value;
}
