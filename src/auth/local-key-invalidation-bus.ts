import type { KeyInvalidation, KeyInvalidationBus } from './key-invalidation.ts';

/**
 * An invalidation bus within one process (a single Node process, Deno, the library): the admin path and the
 * authenticator share the process, so delivery is immediate and nothing can be lost.
 *
 * @example
 * const invalidations = createLocalKeyInvalidationBus();
 */
export function createLocalKeyInvalidationBus(): KeyInvalidationBus {
  const listeners = new Set<(invalidation: KeyInvalidation) => void>();
  return {
    async publish(invalidation) {
      for (const listener of listeners) listener(invalidation);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
