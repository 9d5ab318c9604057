import { describe, expect, it } from 'vitest';
import { makeCreatePetOnce } from '../../../../shared/domain/pets/create-pet-once';
import { InMemoryIdempotencyStore, InMemoryPetStore } from '../../../helpers/in-memory-stores';

const clock = { getRemainingTimeInMillis: () => 10_000 };
const rex = { name: 'Rex', categoryId: 1 };

function open() {
  const pets = new InMemoryPetStore();
  const records = new InMemoryIdempotencyStore();
  return { pets, records, createPetOnce: makeCreatePetOnce(pets, records) };
}

describe('createPet with an Idempotency-Key', () => {
  it('finds the same record and the same pet for the same API key and Idempotency-Key', async () => {
    const { pets, records, createPetOnce } = open();
    const scope = { keyId: 'key-a', idempotencyKey: 'order-1' };
    const first = await createPetOnce(rex, scope, clock);
    const again = await createPetOnce(rex, { ...scope }, clock);
    expect(again).toEqual({ pet: first.pet, replayed: true });
    expect(records.records.size).toBe(1);
    expect(pets.pets.size).toBe(1);
  });

  it('gives the same Idempotency-Key sent with another API key a record and a pet of its own', async () => {
    const { pets, records, createPetOnce } = open();
    const mine = await createPetOnce(rex, { keyId: 'key-a', idempotencyKey: 'order-1' }, clock);
    const theirs = await createPetOnce(rex, { keyId: 'key-b', idempotencyKey: 'order-1' }, clock);
    expect(theirs.replayed).toBe(false);
    expect(theirs.pet.id).not.toBe(mine.pet.id);
    expect(records.records.size).toBe(2);
    expect(pets.pets.size).toBe(2);
  });

  it('does not mistake the key and the API key id for each other, however they split', async () => {
    const { pets, createPetOnce } = open();
    await createPetOnce(rex, { keyId: 'key-a', idempotencyKey: 'b' }, clock);
    await createPetOnce(rex, { keyId: 'key-', idempotencyKey: 'ab' }, clock);
    expect(pets.pets.size).toBe(2);
  });

  // Records and pets as an earlier release stored them for this request: what it is known by is
  // stored, so a change to how it is derived would orphan them.
  const scope = { keyId: 'k_2f1d0c9e', idempotencyKey: '5f3c2f63-1d7e-4a0b-9a51-6c1b2f9e7d10' };
  const storedPet = { id: 1004333544446213, ...rex, createdAt: '2026-11-01T09:00:00.000Z' };

  it('answers from the record an earlier release stored for the same request', async () => {
    const { pets, records, createPetOnce } = open();
    records.records.set('createPet#2qfm4KFnTKO8kL/5nx05rc9BBALeUYZwy1QsVec5kUI=', {
      id: 'createPet#2qfm4KFnTKO8kL/5nx05rc9BBALeUYZwy1QsVec5kUI=',
      status: 'COMPLETED',
      expiration: Math.round(Date.now() / 1000) + 3_600,
      validation: 'O1PRdURm30j1cmaMAJn4nksw4T/GDOQTtEx96Q7VLIQ=',
      data: { pet: { id: storedPet.id, ...rex } },
    });
    expect(await createPetOnce(rex, scope, clock)).toEqual({ pet: { id: storedPet.id, ...rex }, replayed: true });
    expect(pets.pets.size).toBe(0);
  });

  it('settles a retry to the pet an earlier release stored, once its record is gone', async () => {
    const { pets, createPetOnce } = open();
    await pets.insert(storedPet, 'PZY2q9V-NWg10yk_yOBwGw');
    expect(await createPetOnce(rex, scope, clock)).toEqual({ pet: { id: storedPet.id, ...rex }, replayed: true });
    expect(pets.pets.size).toBe(1);
  });
});
