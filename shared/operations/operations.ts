// Written by `npm run generate` from shared/operations/*-operation.ts: edit those, never this file.
import { createPet } from './create-pet-operation';
import { getPet } from './get-pet-operation';
import { listPets } from './list-pets-operation';

/** Every operation, by its name, in the route table's order: what each table of "every operation" derives from. */
export const OPERATIONS = { listPets, createPet, getPet } as const;
