import { describe, expect, it } from 'vitest';
import { InvalidCursorError } from '../../../../shared/domain/pets/pet-errors';
import { decodeCursor, encodeCursor } from '../../../../shared/domain/pets/cursor';

const secret = 'a-secret-of-at-least-thirty-two-characters';
const position = '2026-11-22T12:00:00.000Z#0000000000000042';

describe('pagination cursors', () => {
  it('decode to the position they were issued for', () => {
    const cursor = encodeCursor(position, { status: 'available' }, secret);
    expect(decodeCursor(cursor, { status: 'available' }, secret)).toEqual(position);
  });

  it('cannot be forged: a cursor rewritten to start at another position is rejected', () => {
    const [payload, signature] = encodeCursor(position, {}, secret).split('.') as [string, string];
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { p: string };
    const forged = Buffer.from(JSON.stringify({ ...fields, p: fields.p.replace('42', '43') })).toString('base64url');
    expect(() => decodeCursor(`${forged}.${signature}`, {}, secret)).toThrow(InvalidCursorError);
  });

  it.each([
    ['another status filter', { status: 'sold' as const }],
    ['no status filter', {}],
  ])('are rejected when replayed against %s', (_, filter) => {
    const cursor = encodeCursor(position, { status: 'available' }, secret);
    expect(() => decodeCursor(cursor, filter, secret)).toThrow(InvalidCursorError);
  });

  it('are rejected when any character is changed', () => {
    const cursor = encodeCursor(position, {}, secret);
    for (let index = 0; index < cursor.length; index++) {
      const replacement = cursor[index] === 'A' ? 'B' : 'A';
      const tampered = cursor.slice(0, index) + replacement + cursor.slice(index + 1);
      expect(() => decodeCursor(tampered, {}, secret), `changed at ${index}`).toThrow(InvalidCursorError);
    }
  });

  it('are rejected when signed with another secret', () => {
    const cursor = encodeCursor(position, {}, 'another-secret-of-thirty-two-characters!');
    expect(() => decodeCursor(cursor, {}, secret)).toThrow(InvalidCursorError);
  });

  it.each(['', 'garbage', '.', 'a.b.c', 'x'.repeat(1000), `${Buffer.from('{"v":1}').toString('base64url')}.`])(
    'reject the malformed cursor %j',
    (cursor) => {
      expect(() => decodeCursor(cursor, {}, secret)).toThrow(InvalidCursorError);
    },
  );
});
