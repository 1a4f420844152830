import type { BackendDriver } from './driver.js';

/**
 * The driver with some members replaced and every other one forwarded (methods bound to the driver, so its
 * private state keeps working): how the shared layer layers behaviour over a driver it did not write.
 */
export function driverWith(driver: BackendDriver, overrides: Partial<Record<keyof BackendDriver, unknown>>): BackendDriver {
  const bound = new WeakMap<object, unknown>();
  return new Proxy(driver, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof BackendDriver];
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      let method = bound.get(value);
      if (method === undefined) bound.set(value, (method = (value as (...args: unknown[]) => unknown).bind(target)));
      return method;
    },
  });
}
