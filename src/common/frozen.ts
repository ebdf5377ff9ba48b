/** Objects shared by every caller, frozen so that a caller that tried to change one would throw instead. */

/** `value` and everything in it frozen (in place); returned. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
