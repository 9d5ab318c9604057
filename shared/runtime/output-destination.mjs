// The seam through which whatever runs a function gives its output lines a destination of its own
// (shared/runtime/output.ts): a function set under this key on globalThis, before the function is
// loaded, receives every line instead of stdout and stderr. On Lambda nothing is set. A worker thread
// has a globalThis of its own. Plain JavaScript, typed by output-destination.d.mts: the local
// runtime's function instances and the bench's warm runner load it in a bare Node, with nothing compiled.

/** The key on globalThis: a registered symbol, so a bundle's copy of this module names the same one. */
export const OUTPUT_DESTINATION = Symbol.for('animal-store.output-destination');
