import { PetSchema } from '../domain/pets/pet-output-schemas';
import { PetIdPathSchema } from '../http/pet-parameters';
import { defineOperation } from './operation';

export const getPet = defineOperation({
  route: {
    operationId: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    reads: ['path'],
    successStatus: 200,
    errors: ['invalid_parameter', 'not_found'],
    deprecation: {
      since: new Date('2026-11-22T00:00:00Z'),
      sunset: new Date('2030-12-05T00:00:00Z'),
      successorPath: '/pets',
    },
  },
  schemas: { path: PetIdPathSchema, response: PetSchema },
  prose: {
    gist: 'fetch one',
    summary: 'Get a pet (deprecated)',
    description: [
      'Returns one pet by its id. An id that is not a positive integer in canonical form is a 404, like an unknown one.',
      'It takes no query parameters: any is `400 invalid_parameter`.',
      '',
      '**Deprecated** and removed on 5 December 2030: use `GET /pets` with the `status` filter instead. Every',
      'response carries `Deprecation`, `Sunset` and a `Link` to the replacement.',
    ].join('\n'),
    invalidParameterExample: 'status is not a query parameter of this operation.',
    examples: { response: { id: 4249774335723539, name: 'Rex', categoryId: 1, status: 'available' } },
  },
  variables: ['petsTable'],
  memoryMiB: { staging: 256, production: 512 },
  throttle: { staging: { rateLimit: 4, burstLimit: 8 }, production: { rateLimit: 40, burstLimit: 80 } },
  tables: { pets: ['GetItem'] },
  storeFaults: { call: { table: 'pets', action: 'GetItem' }, writes: 'nothing', lostAnswer: 200, failingStore: 'service_unavailable' },
  deployment: {
    // Its path names a pet no pet has; reading one that exists would need a write first.
    check: { name: 'answers 404 for a pet that does not exist', request: {}, expect: { kind: 'error', code: 'not_found' } },
    // Each reads one of the newest stored pets, so a version that cannot find them answers 404 where the old one answers 200.
    traffic: [{}],
  },
  bench: { request: {}, maxLogBytes: 700 },
});
