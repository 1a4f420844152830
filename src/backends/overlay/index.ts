export { overlayDriver, type OverlayDriverOptions } from './factory.js';
export type { OverlayDriver } from './driver.js';
