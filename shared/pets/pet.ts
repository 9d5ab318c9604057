import * as v from 'valibot';
import { objectIssueMessage } from '../validation';

/** The largest identifier a JSON client can hold exactly in an IEEE-754 double (2^53 − 1). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const NAME_MAX_LENGTH = 200;
export const LIST_LIMIT = { default: 20, min: 1, max: 100 } as const;

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

export const PetStatusSchema = v.pipe(
  v.picklist(PET_STATUSES, `must be one of ${PET_STATUSES.join(', ')}`),
  v.description('Availability of the animal.'),
);
export type PetStatus = v.InferOutput<typeof PetStatusSchema>;

const idMessage = `must be an integer from 1 to ${MAX_ID}`;
/** Integers up to 2^53 − 1; JSON numbers beyond it arrive as NaN (see parseJsonBody) and fail here. */
const IdentifierSchema = v.pipe(
  v.number(idMessage),
  v.integer(idMessage),
  v.minValue(1, idMessage),
  v.maxValue(MAX_ID, idMessage),
);

const nameMessage = `must be a string of 1 to ${NAME_MAX_LENGTH} characters`;
export const PetNameSchema = v.pipe(
  v.string(nameMessage),
  // Length counts Unicode code points, as a person counts characters, not UTF-16 units.
  v.check((name) => {
    const length = [...name].length;
    return length >= 1 && length <= NAME_MAX_LENGTH;
  }, nameMessage),
  v.description("The animal's name."),
);

export const NewPetSchema = v.strictObject(
  {
    name: PetNameSchema,
    categoryId: v.pipe(IdentifierSchema, v.description('Identifier of the category the animal belongs to.')),
    status: v.optional(PetStatusSchema),
  },
  objectIssueMessage('is not an accepted field'),
);
export type NewPet = v.InferOutput<typeof NewPetSchema>;

export const PetIdSchema = v.pipe(IdentifierSchema, v.description('Unique identifier assigned by the service.'));

export const PetSchema = v.object({
  id: PetIdSchema,
  name: PetNameSchema,
  categoryId: IdentifierSchema,
  status: v.optional(PetStatusSchema),
});
export type Pet = v.InferOutput<typeof PetSchema>;

/** The stored record: the public Pet plus when it was created, which orders listings. */
export type PetRecord = Pet & { readonly createdAt: string };

/** Drops storage-only fields so nothing internal leaks into a response. */
export function toPet(record: PetRecord): Pet {
  return {
    id: record.id,
    name: record.name,
    categoryId: record.categoryId,
    ...(record.status === undefined ? {} : { status: record.status }),
  };
}
