import type { FunctionName } from './routes';

/**
 * Memory of each function, in MB, by deployed stage; the local runtime bounds its heaps by it too. Each is
 * the cheapest setting that meets the stage's latency goals (docs/performance.md, "How memory is chosen").
 */
export const FUNCTION_MEMORY_MIB = {
  staging: { listPets: 256, createPet: 256, getPet: 256, routeNotFound: 128, authorizer: 256 },
  production: { listPets: 512, createPet: 512, getPet: 512, routeNotFound: 256, authorizer: 512 },
} as const satisfies Readonly<Record<string, Readonly<Record<FunctionName, number>>>>;
