import { describe, expect, it } from 'vitest';
import { InvalidBodyError, InvalidParameterError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../../../shared/http/errors';
import { MAX_JSON_DEPTH } from '../../../shared/http/json-body';
import { MAX_BODY_BYTES, parseInput, readJsonObject } from '../../../shared/http/request';
import { NewPetSchema } from '../../../shared/domain/pets/pet-schemas';
import { httpEvent } from '../../../tools/lambda/events';

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

  it.each([
    ['1.0', 1],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1.5e1', 15],
    ['10e-1', 1],
    ['9007199254740991.000', 9007199254740991],
    ['9.007199254740991e15', 9007199254740991],
  ])('accepts %s as the integer it denotes exactly, as JSON Schema counts it', (literal, value) => {
    expect(categoryId(literal)).toBe(value);
  });

  it.each([
    '9007199254740992',
    '9007199254740993',
    '9007199254740991.5',
    '1.0000000000000001',
    '1e400',
    '1e-400',
    '1.5',
    '0',
    '-1',
    '"1"',
    '123456789012345678901234567890',
  ])('rejects %s instead of rounding it', (literal) => {
    expect(() => categoryId(literal)).toThrow(InvalidParameterError);
  });
});

describe('Content-Encoding', () => {
  const encoded = (encoding: string) =>
    readJsonObject(
      httpEvent({ method: 'POST', body: '{"name":"Rex"}', headers: { 'content-type': 'application/json', 'content-encoding': encoding } }),
    );

  it.each(['gzip', 'br', 'deflate', 'GZIP', 'gzip, identity'])(
    'refuses a body labelled %s with 415, saying to send it uncompressed',
    (encoding) => {
      expect(() => encoded(encoding)).toThrow(UnsupportedMediaTypeError);
      expect(() => encoded(encoding)).toThrow(/send the body uncompressed/);
    },
  );

  it('accepts identity, which means no encoding', () => {
    expect(encoded('identity')).toEqual({ name: 'Rex' });
  });
});

describe('I-JSON bodies', () => {
  const read = (text: string) => readJsonObject(post(text));
  const problem = (text: string) => {
    try {
      read(text);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidBodyError);
      return (error as Error).message;
    }
    throw new Error('expected the body to be refused');
  };

  it('refuses a repeated member, naming it, whichever spelling repeats it', () => {
    expect(problem('{"name":"a","name":"b","categoryId":1}')).toBe('The request body repeats the member "name".');
    expect(problem('{"name":"a","\\u006eame":"b","categoryId":1}')).toBe('The request body repeats the member "name".');
    expect(problem('{"a":{"b":1,"b":2}}')).toBe('The request body repeats the member "a.b".');
  });

  it('accepts the same member name in different objects', () => {
    expect(read('{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}')).toEqual({ a: { x: 1 }, b: { x: 1 }, c: [{ x: 1 }, { x: 2 }] });
  });

  it('refuses strings with an unpaired surrogate, escaped or not, in a value or a name', () => {
    expect(problem('{"name":"\\ud800","categoryId":1}')).toMatch(/unpaired UTF-16 surrogate .*"name"/);
    expect(problem('{"name":"Rex","\\udc00":1}')).toMatch(/unpaired UTF-16 surrogate/);
    expect(read('{"name":"\\ud83d\\udc36"}')).toEqual({ name: '🐶' });
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels with a message that says so, however deep`, () => {
    const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    expect(read(nested(MAX_JSON_DEPTH))).toBeDefined();
    expect(problem(nested(MAX_JSON_DEPTH + 1))).toBe(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    expect(problem(nested(8_000))).toBe(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  });
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
