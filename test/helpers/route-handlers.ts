import { join } from 'node:path';
import type { IdempotencyStore } from '../../shared/domain/idempotency/idempotency-store';
import type { PetStore } from '../../shared/domain/pets/pet-store';
import { fileNameOf, type RouteFunctionName } from '../../shared/facts/function-names';
import { FUNCTIONS_DIR, PROJECT_ROOT } from '../../shared/facts/project-layout';
import { OPERATION_IDS, type OperationId } from '../../shared/facts/routes';
import type { HttpHandler } from '../../shared/http/handler';

/** Everything an operation's handler may be built over: each takes the part it uses. */
export interface RouteDependencies {
  readonly store: PetStore;
  readonly idempotency: IdempotencyStore;
  readonly cursorSecret: string;
}

/** What every operation's entry point exports besides its handler (docs/adding-an-operation.md): `createPetHandler` for createPet. */
export function handlerFactoryName(operationId: OperationId): string {
  return `create${operationId[0]!.toUpperCase()}${operationId.slice(1)}Handler`;
}

/**
 * Every route function's handler over the given stores: each operation's built by the factory its entry point
 * exports, so a suite that covers every route covers a new one. The entries read their configuration as they
 * load, as on a cold start: the caller sets the environment first.
 */
export async function routeHandlers(dependencies: RouteDependencies): Promise<Record<RouteFunctionName, HttpHandler>> {
  const operations = await Promise.all(
    OPERATION_IDS.map(async (operationId) => {
      const entry = `${FUNCTIONS_DIR}/${fileNameOf(operationId)}.ts`;
      const factory = ((await import(join(PROJECT_ROOT, entry))) as Record<string, unknown>)[handlerFactoryName(operationId)];
      if (typeof factory !== 'function') throw new Error(`${entry} exports no ${handlerFactoryName(operationId)}(dependencies)`);
      return [operationId, (factory as (dependencies: RouteDependencies) => HttpHandler)(dependencies)] as const;
    }),
  );
  const { handler: routeNotFound } = await import('../../functions/route-not-found');
  return { ...(Object.fromEntries(operations) as Record<OperationId, HttpHandler>), routeNotFound };
}
