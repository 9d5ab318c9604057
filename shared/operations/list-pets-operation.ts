import { PetListSchema } from '../domain/pets/pet-output-schemas';
import { LIST_LIMIT } from '../domain/pets/pet-schemas';
import { ListPetsQuerySchema } from '../http/pet-parameters';
import { defineOperation } from './operation';

export const listPets = defineOperation({
  route: {
    operationId: 'listPets',
    method: 'GET',
    path: '/pets',
    reads: ['query'],
    successStatus: 200,
    errors: ['invalid_parameter', 'invalid_cursor'],
    paginated: true,
  },
  schemas: { query: ListPetsQuerySchema, response: PetListSchema },
  prose: {
    gist: 'list them',
    summary: 'List pets',
    description: [
      'Lists pets, newest first, optionally only those of one `status`.',
      '',
      `Pages hold at most \`limit\` pets (default ${LIST_LIMIT.default}, ${LIST_LIMIT.min} to ${LIST_LIMIT.max}). When more pets match, the`,
      'response has a `Link` header with `rel="next"` whose URL fetches the next page; the last page has none.',
      'The body is always a bare array. Cursors are opaque and belong to the listing that issued them: a changed',
      'cursor, or one used with another `status`, is `400 invalid_cursor`. `limit` may change between pages.',
      '',
      'After a create: listings read indexes that DynamoDB updates shortly after the write (usually within tens of',
      'milliseconds), so a pet answered `201` is listed that soon, whatever the rate of listings. `getPet` reads the pet itself.',
      '',
      'Query parameters other than these are rejected with `400 invalid_parameter`, as on every operation.',
    ].join('\n'),
    invalidParameterExample: `limit must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}.`,
    parameters: { status: 'Only pets with this status.' },
    examples: {
      response: [
        { id: 4249774335723539, name: 'Rex', categoryId: 1, status: 'available' },
        { id: 1187026371529265, name: 'Tom', categoryId: 2 },
      ],
    },
  },
  variables: ['petsTable', 'cursorSecret', 'listingShards'],
  memoryMiB: { staging: 256, production: 512 },
  // Listings are most of the traffic.
  throttle: { staging: { rateLimit: 9, burstLimit: 18 }, production: { rateLimit: 90, burstLimit: 180 } },
  tables: { pets: ['Query'] },
  // A page queries every listing shard; a lost answer's retry is one more query.
  storeFaults: { call: { table: 'pets', action: 'Query' }, writes: 'nothing', lostAnswer: 200, failingStore: 'service_unavailable' },
  deployment: {
    check: { name: 'lists pets to an authenticated caller', request: { query: { limit: '1' } }, expect: { kind: 'listing' } },
    // One pet, then a full page, in turn.
    traffic: [{ query: { limit: '1' } }, { query: { limit: '20' } }],
  },
  bench: { request: {}, maxLogBytes: 700 },
});
