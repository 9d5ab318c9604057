import * as v from 'valibot';
import { LIST_LIMIT, PET_FIELDS, PetIdSchema } from './pet-schemas';

/**
 * What the API answers with, for the OpenAPI document and the tests. Apart from pet-schemas.ts so no
 * function builds them at load: no function parses its own answers.
 */

export const PetSchema = v.pipe(
  v.object({ id: PetIdSchema, ...PET_FIELDS }),
  v.description('An animal of the store. `status` is absent when none was given on creation.'),
);

export const PetListSchema = v.pipe(v.array(PetSchema), v.maxLength(LIST_LIMIT.max), v.description('Pets, newest first.'));
