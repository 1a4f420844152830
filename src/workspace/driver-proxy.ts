import type { BackendDriver } from './driver.js';

/**
 * The driver with some members replaced and every other one forwarded (methods bound to the driver, so its
 * private state keeps working): how the shared layer layers behaviour over a driver it did not write.
 *
 * Every driver call of every operation goes through these layers, so the members the driver has now are
 * forwarded by plain getters (a Proxy trap costs several times more per call); they read the driver live,
 * so a member replaced later is seen, and one added later is found through a Proxy behind them.
 */
export function driverWith(driver: BackendDriver, overrides: Partial<Record<keyof BackendDriver, unknown>>): BackendDriver {
  // Over another layer: the same as one layer over its driver with both sets of members, the new ones first
  // (a layer's members are closures over the driver they wrap, not `this`), so that a driver call costs one
  // getter and one bound call however many layers there are (a policy's view over the versions layer).
  const below = layers.get(driver);
  if (below !== undefined) return driverWith(below.driver, { ...below.overrides, ...overrides });
  const bound = new WeakMap<object, unknown>();
  const forward = (value: unknown): unknown => {
    if (typeof value !== 'function') return value;
    let method = bound.get(value);
    if (method === undefined) bound.set(value, (method = (value as (...args: unknown[]) => unknown).bind(driver)));
    return method;
  };
  const late = new Proxy(driver, { get: (target, property) => forward(Reflect.get(target, property)) });
  const layered = Object.create(late) as Record<PropertyKey, unknown>;
  for (
    let owner: object | null = driver;
    owner !== null && owner !== Object.prototype;
    owner = Object.getPrototypeOf(owner) as object | null
  ) {
    for (const key of Reflect.ownKeys(owner)) {
      if (key === 'constructor' || Object.hasOwn(layered, key) || Object.hasOwn(overrides, key)) continue;
      let last: unknown;
      let method: unknown;
      Object.defineProperty(layered, key, {
        configurable: true,
        enumerable: true,
        get: () => {
          const value: unknown = Reflect.get(driver, key);
          if (typeof value !== 'function') return value;
          if (value !== last) {
            last = value;
            method = forward(value);
          }
          return method;
        },
        set: (value: unknown) => Reflect.set(driver, key, value),
      });
    }
  }
  for (const key of Object.keys(overrides))
    Object.defineProperty(layered, key, { configurable: true, enumerable: true, value: overrides[key as keyof BackendDriver] });
  layers.set(layered, { driver, overrides });
  return layered as unknown as BackendDriver;
}

/** What each layer was made of. */
const layers = new WeakMap<object, { driver: BackendDriver; overrides: Partial<Record<keyof BackendDriver, unknown>> }>();
