import { createHmac, timingSafeEqual } from 'node:crypto';
import * as v from 'valibot';
import { MAX_CURSOR_LENGTH, PetStatusSchema, type PetStatus } from './pet-schemas';
import { InvalidCursorError } from './pet-errors';
import type { ListPosition } from './pet-store';

const CursorPayloadSchema = v.strictObject({
  v: v.literal(1),
  /** The status filter the cursor was issued for; '' for none. */
  s: v.union([v.literal(''), PetStatusSchema]),
  /** The position the store issued, as it issued it. */
  p: v.pipe(v.string(), v.nonEmpty()),
});

/**
 * Pagination cursors are opaque to clients: a base64url JSON position signed with HMAC-SHA256.
 * The signature makes a tampered cursor a 400 rather than a jump to an arbitrary position, and
 * binding the filter into it means a cursor from one listing can never page through another.
 */
export function encodeCursor(position: ListPosition, filter: { status?: PetStatus }, secret: string): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, s: filter.status ?? '', p: position })).toString('base64url');
  return `${payload}.${sign(payload, secret).toString('base64url')}`;
}

/** Decodes a cursor issued by encodeCursor for this same filter, or throws InvalidCursorError. */
export function decodeCursor(cursor: string, filter: { status?: PetStatus }, secret: string): ListPosition {
  if (cursor.length > MAX_CURSOR_LENGTH) throw new InvalidCursorError();
  const [payload = '', signature = '', ...rest] = cursor.split('.');
  const given = Buffer.from(signature, 'base64url');
  const expected = sign(payload, secret);
  // Base64 decoding ignores a final character's spare bits, padding and stray characters, so the
  // signature must also be the canonical encoding of what it decodes to: no character can change.
  if (
    rest.length > 0 ||
    given.toString('base64url') !== signature ||
    given.length !== expected.length ||
    !timingSafeEqual(given, expected)
  ) {
    throw new InvalidCursorError();
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  const parsed = v.safeParse(CursorPayloadSchema, decoded);
  if (!parsed.success || parsed.output.s !== (filter.status ?? '')) throw new InvalidCursorError();
  return parsed.output.p;
}

function sign(payload: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest().subarray(0, 16);
}
