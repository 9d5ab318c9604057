import { PetSchema } from '../domain/pets/pet-output-schemas';
import { NewPetSchema } from '../domain/pets/pet-schemas';
import { MAX_JSON_DEPTH } from '../http/json-body';
import { MAX_BODY_BYTES } from '../http/request';
import { defineOperation } from './operation';

const JSON_CONTENT = { 'content-type': 'application/json' } as const;

export const createPet = defineOperation({
  route: {
    operationId: 'createPet',
    method: 'POST',
    path: '/pets',
    reads: ['body'],
    successStatus: 201,
    errors: [
      'invalid_body',
      'invalid_parameter',
      'idempotency_key_in_use',
      'payload_too_large',
      'unsupported_media_type',
      'idempotency_key_reused',
    ],
    idempotent: true,
  },
  schemas: { body: NewPetSchema, response: PetSchema },
  prose: {
    gist: 'add them',
    summary: 'Add a pet',
    description: [
      'Adds a pet. The service assigns its `id`; `status`, when omitted, stays absent.',
      '',
      `The body must be an uncompressed JSON object (\`Content-Type: application/json\`, no \`Content-Encoding\`) of`,
      `at most ${MAX_BODY_BYTES} bytes, in I-JSON (RFC 7493): no repeated member names, no unpaired surrogates in strings,`,
      `nested at most ${MAX_JSON_DEPTH} levels. Fields other than \`name\`, \`categoryId\` and \`status\`, \`id\` included, are`,
      'rejected. `categoryId` is read for its exact value: `1.0` and `1e3` are the integers 1 and 1000, while fractions',
      'and numbers a double cannot hold exactly are rejected, not rounded. A rejected request stores nothing.',
      '',
      '**Retrying safely.** A `201` always means exactly one new pet. A `503` (or a lost connection) does not say',
      'whether the pet was stored: send an `Idempotency-Key` (a new UUID per pet) and retry with the same key and',
      'body until you get a `201`; you end with exactly one pet. A retry of a completed request answers the original',
      '`201` with `Idempotent-Replayed: true`; while the first request is still running it is `409` with',
      '`Retry-After`; the same key with another body is `422`. Keys belong to the API key that sent them and are',
      'honoured for at least 24 hours.',
    ].join('\n'),
    invalidParameterExample: 'categoryId is required; id is not an accepted field.',
    examples: {
      request: { name: 'Rex', categoryId: 1, status: 'available' },
      response: { id: 4249774335723539, name: 'Rex', categoryId: 1, status: 'available' },
    },
  },
  variables: ['petsTable', 'idempotencyTable', 'writeShards'],
  memoryMiB: { staging: 256, production: 512 },
  throttle: { staging: { rateLimit: 5, burstLimit: 10 }, production: { rateLimit: 50, burstLimit: 100 } },
  tables: {
    // GetItem: a conditional put that fails is read back to tell our own earlier write from a collision.
    pets: ['PutItem', 'GetItem'],
    // An Idempotency-Key's record: claimed (put), read, completed (update), released (delete).
    idempotency: ['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem'],
  },
  // Sent without an Idempotency-Key: the conditional put alone keeps a retried write to one pet.
  storeFaults: {
    body: { name: 'Rex', categoryId: 1 },
    call: { table: 'pets', action: 'PutItem' },
    writes: 'one pet',
    lostAnswer: 201,
    failingStore: 'service_unavailable',
  },
  deployment: {
    // Refused before anything is stored: no Idempotency-Key, so no record either.
    check: {
      name: 'refuses a pet without its required fields, storing nothing',
      request: { headers: JSON_CONTENT, body: '{}' },
      expect: { kind: 'error', code: 'invalid_parameter' },
    },
    // No required field and no Idempotency-Key: refused before any write, a record included.
    traffic: [{ headers: JSON_CONTENT, body: '{}' }],
  },
  bench: {
    request: { headers: JSON_CONTENT, body: JSON.stringify({ name: 'Bench pet', categoryId: 3, status: 'available' }) },
    maxLogBytes: 900,
  },
});
