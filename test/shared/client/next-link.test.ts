import { describe, expect, it } from 'vitest';
import { nextLink } from '../../../shared/client/create-client';

describe("the client's reading of a Link header", () => {
  const page = 'https://api.example.com/v1/pets?limit=7';

  it('finds the rel="next" target among other links, resolved against the page', () => {
    const header = '<https://api.example.com/v1/pets/1>; rel="successor-version", </v1/pets?cursor=abc&limit=7>; rel="next"';
    expect(nextLink(header, page)).toBe('https://api.example.com/v1/pets?cursor=abc&limit=7');
  });

  it('reads rel unquoted, in any case, or among several relations', () => {
    expect(nextLink('<https://api.example.com/v1/pets?cursor=a>; rel=next', page)).toBe('https://api.example.com/v1/pets?cursor=a');
    expect(nextLink('<https://api.example.com/v1/pets?cursor=b>; REL="Next"', page)).toBe('https://api.example.com/v1/pets?cursor=b');
    expect(nextLink('<https://api.example.com/v1/pets?cursor=c>; rel="next last"', page)).toBe('https://api.example.com/v1/pets?cursor=c');
  });

  it('finds none on the last page, or where only other relations are', () => {
    expect(nextLink(null, page)).toBeUndefined();
    expect(nextLink('<https://api.example.com/v1/pets?cursor=a>; rel="nextish"', page)).toBeUndefined();
    expect(nextLink('<https://api.example.com/v1/pets/1>; rel="successor-version"', page)).toBeUndefined();
  });
});
