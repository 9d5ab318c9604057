import * as v from 'valibot';
import { LIST_LIMIT, PET_FIELDS, PetIdSchema } from './pet-schemas';

/**
 * What the API answers with: the OpenAPI document describes it, and the tests and the smoke test
 * check answers against it. Apart from the input schemas in pet-schemas.ts, which the functions
 * load: no function parses its own answers (toPet writes them to the Pet type), and built at load
 * these schemas were part of every cold start.
 */

export const PetSchema = v.pipe(
  v.object({ id: PetIdSchema, ...PET_FIELDS }),
  v.description('An animal of the store. `status` is absent when none was given on creation.'),
);

export const PetListSchema = v.pipe(v.array(PetSchema), v.maxLength(LIST_LIMIT.max), v.description('Pets, newest first.'));
