import { describe, expect, it } from 'vitest';
import { InvalidBodyError, InvalidParameterError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../../shared/http/errors';
import { MAX_BODY_BYTES, parseInput, readJsonObject } from '../../shared/http/request';
import { NewPetSchema } from '../../shared/pets/pet';
import { httpEvent } from '../helpers/events';

const post = (body: string | undefined, contentType: string | null = 'application/json', isBase64Encoded = false) =>
  httpEvent({
    method: 'POST',
    body,
    isBase64Encoded,
    headers: contentType === null ? {} : { 'content-type': contentType },
  });

describe('reading a JSON body', () => {
  it('returns the object', () => {
    expect(readJsonObject(post('{"name":"Rex"}'))).toEqual({ name: 'Rex' });
  });

  it('decodes a base64-encoded body', () => {
    expect(readJsonObject(post(Buffer.from('{"a":1}').toString('base64'), 'application/json', true))).toEqual({ a: 1 });
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON', 'application/merge-patch+json'])('accepts %s', (type) => {
    expect(readJsonObject(post('{}', type))).toEqual({});
  });

  it.each([null, 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/jsonx'])(
    'rejects content type %s with 415',
    (type) => {
      expect(() => readJsonObject(post('{}', type))).toThrow(UnsupportedMediaTypeError);
    },
  );

  it('rejects a body over 16 KiB with 413, counting bytes not characters', () => {
    const body = JSON.stringify({ name: 'é'.repeat(MAX_BODY_BYTES / 2) });
    expect(() => readJsonObject(post(body))).toThrow(PayloadTooLargeError);
  });

  it.each([undefined, '', '{', '{"a":1}x', '[]', '"text"', '42', 'null'])('rejects the body %j with 400', (body) => {
    expect(() => readJsonObject(post(body))).toThrow(InvalidBodyError);
  });
});

describe('JSON numbers', () => {
  const categoryId = (literal: string) =>
    parseInput(NewPetSchema, readJsonObject(post(`{"name":"Rex","categoryId":${literal}}`))).categoryId;

  it('accepts the largest exact integer, 2^53 - 1', () => {
    expect(categoryId('9007199254740991')).toBe(9007199254740991);
  });

  it.each(['9007199254740992', '9007199254740993', '1e3', '1.0', '1.5', '0', '-1', '"1"', '123456789012345678901234567890'])(
    'rejects %s instead of rounding it',
    (literal) => {
      expect(() => categoryId(literal)).toThrow(InvalidParameterError);
    },
  );
});

describe('validation messages', () => {
  const problems = (input: unknown) => {
    try {
      parseInput(NewPetSchema, input);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected a validation error');
  };

  it('name every missing field', () => {
    expect(problems({})).toBe('name is required; categoryId is required.');
  });

  it('name an unknown field', () => {
    expect(problems({ name: 'Rex', categoryId: 1, id: 5 })).toBe('id is not an accepted field.');
  });

  it('counts name length in characters, not UTF-16 units', () => {
    expect(parseInput(NewPetSchema, { name: '🐶'.repeat(200), categoryId: 1 }).name).toHaveLength(400);
    expect(problems({ name: '🐶'.repeat(201), categoryId: 1 })).toBe('name must be a string of 1 to 200 characters.');
  });
});
