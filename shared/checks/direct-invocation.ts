/**
 * What the pre-traffic hook and the deployment traffic share when they invoke a function directly, through the
 * Lambda SDK: bounded calls, and the payload going in as JSON and coming back as JSON or, failing that, text.
 */

/** Options of every call the hook and the deployment traffic make: each is bounded, so a run ends within its own timeout. */
export interface CallOptions {
  readonly abortSignal: AbortSignal;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An event as Lambda's Invoke takes it. */
export function encodePayload(event: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(event));
}

/** What an invocation gave back: its JSON, or its text when it is not JSON; none when it gave nothing. */
export function decodePayload(payload: Uint8Array | undefined): { readonly text: string; readonly value: unknown } {
  const text = payload === undefined ? '' : decoder.decode(payload);
  try {
    return { text, value: JSON.parse(text) };
  } catch {
    return { text, value: text };
  }
}
