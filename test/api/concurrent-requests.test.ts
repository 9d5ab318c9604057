import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_INSTANCES } from '../../local/functions';
import { ENV } from '../../shared/facts/environment';
import { METRICS } from '../../shared/facts/metric-names';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { captureOutput } from '../helpers/output';
import { idempotencyRecords, newPet, postPetWithKey, storedPets, type PetBody } from '../helpers/pets';

/** Concurrent requests to one function, served as Lambda serves them: each invocation in an instance of its own. */

let api: TestApi;

beforeAll(async () => {
  // The test run turns metrics off (vitest.config.ts); here the ColdStart metric counts the instances.
  api = await startTestApi({ functionEnvironment: () => ({ [ENV.metricsDisabled]: 'false' }) });
});
afterAll(async () => {
  await api?.close();
});

describe('concurrent requests', () => {
  it('are served by several instances of a function, each pet stored once, and an idle instance serves the next request', async () => {
    const output = captureOutput({ silent: true });
    try {
      const createPetInstances = () =>
        output.json().filter((line) => line[METRICS.coldStart] !== undefined && line.function_name === 'animal-store-local-createPet')
          .length;
      const bodies = Array.from({ length: 10 }, () => newPet({ name: `Burst ${randomUUID()}` }));
      const responses = await Promise.all(bodies.map((body) => postPetWithKey(api, body, randomUUID())));
      expect(responses.map((response) => response.status)).toEqual(bodies.map(() => 201));
      const created = await Promise.all(responses.map((response) => response.json() as Promise<PetBody>));

      const instances = createPetInstances();
      expect(instances).toBeGreaterThan(1);
      expect(instances).toBeLessThanOrEqual(DEFAULT_MAX_INSTANCES);
      const last = await postPetWithKey(api, newPet(), randomUUID());
      expect(last.status).toBe(201);
      expect(createPetInstances()).toBe(instances);

      const stored = await storedPets(api.documents);
      for (const [index, body] of bodies.entries()) {
        expect(stored.filter((pet) => pet.name === body.name).map((pet) => pet.id)).toEqual([created[index]!.id]);
      }
      expect(stored).toHaveLength(bodies.length + 1);
      const records = await idempotencyRecords(api.documents);
      expect(records).toHaveLength(bodies.length + 1);
      expect(records.filter((record) => record.status !== 'COMPLETED')).toEqual([]);
    } finally {
      output.stop();
    }
  });
});
