import type * as v from 'valibot';
import { ListPetsQuerySchema, PetIdPathSchema } from '../http/pet-parameters';
import { PetListSchema, PetSchema } from '../domain/pets/pet-output-schemas';
import { NewPetSchema } from '../domain/pets/pet-schemas';
import type { OperationId, RequestPart, routes } from '../facts/routes';

/**
 * Each operation's schemas (the very ones its handler parses with, and its success response's), for the
 * OpenAPI document and the tests; kept out of the route table, which every function bundles.
 */

type RouteOf<TOperation extends OperationId> = Extract<(typeof routes)[number], { operationId: TOperation }>;

/**
 * A schema for each part of a request the route reads, none for a part it does not, and its success response's.
 * An operation whose route was removed from the table checks nothing here: its schemas wait to be deleted.
 */
export type RouteSchemas<TOperation extends OperationId = OperationId> = ([RouteOf<TOperation>] extends [never]
  ? { readonly [TPart in RequestPart]?: v.GenericSchema }
  : { readonly [TPart in RouteOf<TOperation>['reads'][number]]: v.GenericSchema }) & { readonly response: v.GenericSchema };

export const ROUTE_SCHEMAS = {
  listPets: { query: ListPetsQuerySchema, response: PetListSchema },
  createPet: { body: NewPetSchema, response: PetSchema },
  getPet: { path: PetIdPathSchema, response: PetSchema },
} as const satisfies { readonly [TOperation in OperationId]: RouteSchemas<TOperation> };

/** An operation's schemas, by part: undefined for a part it does not read. */
export function schemasOf(
  operationId: OperationId,
): Partial<Record<RequestPart, v.GenericSchema>> & { readonly response: v.GenericSchema } {
  return ROUTE_SCHEMAS[operationId];
}
