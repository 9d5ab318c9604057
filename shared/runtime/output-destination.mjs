// The seam through which a runner redirects a function's output lines (shared/runtime/output.ts); on
// Lambda nothing is set. Plain JavaScript, so a bare Node can load it with nothing compiled.

/** The key on globalThis: a registered symbol, so a bundle's copy of this module names the same one. */
export const OUTPUT_DESTINATION = Symbol.for('animal-store.output-destination');
