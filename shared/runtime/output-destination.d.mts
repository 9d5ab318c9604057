/** The key on globalThis under which a runner sets where the function's output lines go (shared/runtime/output.ts). */
export declare const OUTPUT_DESTINATION: unique symbol;
