import type { FunctionName } from './routes';

/**
 * Memory of each function, in MB, by deployed stage: what infra/stages.ts deploys, and what the local
 * runtime bounds its instances' heaps by (local/functions.ts). CPU share grows with it, so it bounds
 * cold starts and latency; each is the cheapest setting that meets the stage's latency goals with
 * 10 % to spare (tools/bench/memory-sizing.ts) by `npm run bench`'s estimate.
 */
export const FUNCTION_MEMORY_MIB = {
  staging: { listPets: 256, createPet: 256, getPet: 256, routeNotFound: 128, authorizer: 256 },
  production: { listPets: 512, createPet: 512, getPet: 512, routeNotFound: 256, authorizer: 512 },
} as const satisfies Readonly<Record<string, Readonly<Record<FunctionName, number>>>>;
