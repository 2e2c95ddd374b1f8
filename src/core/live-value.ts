/**
 * A value given either as is or as a getter read at each use: a setting passed as a getter takes
 * effect without a reload (docs/flows.md#questions-park-the-task).
 */
export type LiveValue<T> = T | (() => T);

/** The value now. */
export function currentValue<T>(value: LiveValue<T>): T {
  return typeof value === 'function' ? (value as () => T)() : value;
}
