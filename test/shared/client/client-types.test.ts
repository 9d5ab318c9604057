import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { findRoute } from '../../../shared/facts/routes';
import { createClient, type NewPet, type Pet } from '../../../shared/client/create-client';
import type { components } from '../../../shared/client/api-types';

// Checked by `npm run typecheck`, which npm test runs first: each @ts-expect-error fails it when its line compiles.
const client = createClient({ baseUrl: 'http://localhost:3000/v1', apiKey: 'pets_key' });

/** Never called: only compiled. */
function wrongCalls(): void {
  // @ts-expect-error a name is a string
  void client.createPet({ name: 7, categoryId: 1 });
  // @ts-expect-error categoryId is required
  void client.createPet({ name: 'Rex' });
  // @ts-expect-error the service assigns the id
  void client.createPet({ name: 'Rex', categoryId: 1, id: 5 });
  // @ts-expect-error no such status
  void client.createPet({ name: 'Rex', categoryId: 1, status: 'lost' });
  // @ts-expect-error limit is a number
  void client.listPets({ limit: '7' });
  // @ts-expect-error the cursor is the client's to follow
  void client.listPets({ cursor: 'abc' });
  // @ts-expect-error a pet's id is a number
  void client.getPet('1');
  // @ts-expect-error the key goes in createPet's options, not the pet
  void client.createPet({ name: 'Rex', categoryId: 1, idempotencyKey: 'k' });
}
// Used only so it is not an unused declaration: its calls are checked by the type-checker, through their @ts-expect-error.
void wrongCalls;

describe("the client's types", () => {
  it("are openapi.json's: a pet is the document's Pet, a new pet its NewPet", () => {
    expectTypeOf<Pet>().toEqualTypeOf<components['schemas']['Pet']>();
    expectTypeOf<NewPet>().toEqualTypeOf<components['schemas']['NewPet']>();
    expectTypeOf(client.createPet).returns.resolves.toEqualTypeOf<Pet>();
    expectTypeOf(client.listPets()).toMatchTypeOf<AsyncIterable<Pet>>();
  });

  it('mark getPet deprecated, naming its sunset date and its successor, listPets by status', () => {
    const { deprecation } = findRoute('getPet');
    const sunset = deprecation!.sunset.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
    const doc = deprecationOf('Client', 'getPet')!;
    expect(doc).toContain(`on ${sunset} `);
    expect(doc).toMatch(/use\s+`listPets\(\{ status \}\)`/);
    expect(findRoute('listPets').path).toBe(deprecation!.successorPath);
  });
});

/** The text of a member's @deprecated tag in the client's source, as an editor shows it to a caller. */
function deprecationOf(interfaceName: string, member: string): string | undefined {
  const path = new URL('../../../shared/client/create-client.ts', import.meta.url);
  const source = ts.createSourceFile(path.pathname, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const declared = source.statements.find(
    (node): node is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(node) && node.name.text === interfaceName,
  );
  const method = declared?.members.find((node) => node.name?.getText(source) === member);
  const tag = method && ts.getJSDocDeprecatedTag(method);
  return tag && ts.getTextOfJSDocComment(tag.comment);
}
