export type OutputStreamName = 'stdout' | 'stderr';

export function interceptOutput(
  observe: (stream: OutputStreamName, bytes: Uint8Array) => void,
  options?: { readonly swallow?: boolean },
): () => void;
