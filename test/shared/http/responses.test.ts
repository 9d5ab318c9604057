import { describe, expect, it } from 'vitest';
import { noContent, ok } from '../../../shared/http/responses';

describe('a 204 answer', () => {
  it('has no body and no content type, as a 204 must not', () => {
    const response = noContent();
    expect(response.statusCode).toBe(204);
    expect(response).not.toHaveProperty('body');
    expect(response.headers).toEqual({});
  });

  it('carries the headers it is given, their names lower-cased as every answer writes them', () => {
    expect(noContent({ 'Idempotent-Replayed': 'true' }).headers).toEqual({ 'idempotent-replayed': 'true' });
  });

  it('is unlike a 200, which is JSON', () => {
    expect(ok({ id: 1 })).toEqual({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"id":1}' });
  });
});
