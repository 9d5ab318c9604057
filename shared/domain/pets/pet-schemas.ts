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
  v.metadata({ format: 'int64' }),
);

const nameMessage = `must be a string of 1 to ${NAME_MAX_LENGTH} characters`;
export const PetNameSchema = v.pipe(
  v.string(nameMessage),
  // Length counts Unicode code points, as a person counts characters (and as JSON Schema's
  // minLength/maxLength do), not UTF-16 units.
  v.check((name) => {
    const length = [...name].length;
    return length >= 1 && length <= NAME_MAX_LENGTH;
  }, nameMessage),
  // Every client must be able to read it back: an unpaired surrogate makes the whole listing page
  // undecodable for Python, serde or pydantic (I-JSON, RFC 7493).
  v.check((name) => name.isWellFormed(), 'must be valid Unicode text (no unpaired UTF-16 surrogates)'),
  v.metadata({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
  v.description("The animal's name."),
);

export const CategoryIdSchema = v.pipe(IdentifierSchema, v.description('Identifier of the category the animal belongs to.'));

/**
 * The fields a client gives a pet, listed once: the schemas, the stored item and the replay comparison
 * all derive from them, so a field added here reaches every one.
 */
export const PET_FIELDS = {
  name: PetNameSchema,
  categoryId: CategoryIdSchema,
  status: v.optional(PetStatusSchema),
};

export const NewPetSchema = v.pipe(
  v.strictObject(PET_FIELDS, objectIssueMessage('is not an accepted field')),
  v.description('An animal to add. Fields other than these, `id` included, are rejected.'),
);
export type NewPet = v.InferOutput<typeof NewPetSchema>;
export const PET_FIELD_NAMES = Object.keys(PET_FIELDS) as ReadonlyArray<keyof NewPet>;

export const PetIdSchema = v.pipe(IdentifierSchema, v.description('Unique identifier assigned by the service.'));

/** A pet as the API answers with it: its fields and the id the service gave it. */
export type Pet = { id: number } & NewPet;

/** The stored record: the public Pet plus when it was created, which orders listings. */
export type PetRecord = Pet & { readonly createdAt: string };

/** The pet fields `source` has (an absent status stays absent): what an answer, an item or a record carries of a pet. */
export function petFieldsOf(source: Readonly<Record<string, unknown>>): NewPet {
  const fields: Record<string, unknown> = {};
  for (const name of PET_FIELD_NAMES) if (source[name] !== undefined) fields[name] = source[name];
  return fields as NewPet;
}

/** Drops storage-only fields so nothing internal leaks into a response. */
export function toPet(record: PetRecord): Pet {
  return { id: record.id, ...petFieldsOf(record) };
}

/** Whether a stored pet has exactly the fields a request asked for: a replay, not another pet. */
export function isSamePet(stored: PetRecord, input: NewPet): boolean {
  return PET_FIELD_NAMES.every((name) => stored[name] === input[name]);
}

/** The longest cursor decodeCursor reads (shared/domain/pets/cursor.ts); anything longer is invalid_cursor. */
export const MAX_CURSOR_LENGTH = 256;
