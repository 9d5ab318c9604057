import * as v from 'valibot';
import { LIST_LIMIT, MAX_CURSOR_LENGTH, PetIdSchema, PetStatusSchema } from '../domain/pets/pet-schemas';
import { objectIssueMessage } from '../domain/validation';

// The pet routes' query and path parameters as API Gateway passes them (every value a string).

const limitMessage = `must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}`;

/**
 * listPets' query string, as API Gateway passes it: every value a string, repeated names joined
 * by commas. Parameters outside the contract are rejected, so a typo never silently widens a listing.
 */
export const ListPetsQuerySchema = v.strictObject(
  {
    // The default is the query's text, parsed like a client's: the handler and the document read it here.
    limit: v.optional(
      v.pipe(
        v.string(limitMessage),
        // Integers in a URL are written one way, canonical decimal: `01` is refused here as `/pets/007`
        // names no pet there.
        v.regex(/^(?:0|[1-9]\d{0,2})$/, limitMessage),
        v.transform(Number),
        v.number(),
        v.integer(),
        v.minValue(LIST_LIMIT.min, limitMessage),
        v.maxValue(LIST_LIMIT.max, limitMessage),
        v.metadata({ format: 'int32' }),
        v.description('Maximum number of pets to return.'),
      ),
      String(LIST_LIMIT.default),
    ),
    // The named schema itself, so generated clients get one PetStatus type, not a second inline enum.
    status: v.optional(PetStatusSchema),
    // Any string here: decodeCursor bounds its length and answers invalid_cursor for anything it did not issue.
    cursor: v.optional(
      v.pipe(
        v.string(),
        // Documented, not checked here: a longer one is a cursor we never issued, invalid_cursor like any other.
        // The shape encodeCursor writes: base64url payload, a dot, base64url signature.
        v.metadata({ maxLength: MAX_CURSOR_LENGTH, pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$' }),
        v.description(
          `Where the page starts: copy it from the \`Link: rel="next"\` header of the previous page. Opaque, at most ${MAX_CURSOR_LENGTH} characters.`,
        ),
      ),
    ),
  },
  objectIssueMessage('is not a query parameter of this operation'),
);

/**
 * getPet's path parameter: an id in its canonical decimal form. `007`, `7.0` or `abc` name no pet,
 * so they are a 404 like any unknown id, not a 400.
 */
export const PetIdPathSchema = v.strictObject({
  petId: v.pipe(v.string(), v.regex(/^[1-9]\d{0,15}$/), v.transform(Number), PetIdSchema),
});
