import { production } from '../../infra/stages';
import { isDeployed } from './bench-functions';
import { dollars } from './format';
import { LOG_BYTES_BESIDE_FUNCTIONS } from './log-lines';
import type { CapacityRow } from './measure-capacity';
import type { WarmRequestResults } from './measure-warm-requests';
import { timeAt } from './memory-sizing';
import { PRICES } from './prices';
import type { WarmResult } from './warm';
import type { ApiFunctionName } from '../../shared/facts/function-names';

/** What a million requests of one operation cost in production, part by part. */
export interface BillRow {
  readonly operation: string;
  readonly 'HTTP API': string;
  readonly 'Lambda requests': string;
  readonly 'Lambda duration': string;
  readonly DynamoDB: string;
  readonly 'log bytes': number;
  readonly logs: string;
  readonly 'per million': string;
  /** The architecture's floor for the request: HTTP API, two invocations and its DynamoDB units; the rest is ours. */
  readonly floor: string;
  readonly 'to floor': number;
  readonly total: number;
}

export function capacityAt(capacity: readonly CapacityRow[], scenario: string, pets: number): CapacityRow {
  return capacity.find((row) => row.scenario === scenario && row.pets === pets)!;
}

/**
 * Per million production requests at the memory configured: function and authorizer billed per started ms, at the
 * capacity measured on the smallest table. Cold starts and the free tier are left out.
 */
export function computeBill(
  { warm, authorizer }: Pick<WarmRequestResults, 'warm' | 'authorizer'>,
  capacity: readonly CapacityRow[],
  pets: number,
): BillRow[] {
  const productionAuthorizer = authorizer.get(production.name)!;
  const billedMs = (name: ApiFunctionName, result: WarmResult) =>
    Math.ceil(timeAt(production.memoryMiB[name], result.p50Ms, result.cpuUsPerRequest / 1000));
  const durationCost = (name: ApiFunctionName, milliseconds: number) =>
    (milliseconds / 1000) * (production.memoryMiB[name] / 1024) * PRICES.lambdaArmPerGbSecond * 1e6;
  const zero = { readUnits: 0, writeUnits: 0 };
  // The function's warm result and its capacity scenario of the same name.
  const measuredAs = (operation: string, name: ApiFunctionName) => ({
    operation,
    name,
    measured: () => ({ result: warm.get(name)!.fn, units: capacityAt(capacity, operation, pets) }),
  });
  // What each line measured, read only for a function the route table still deploys.
  const operations: Array<{ operation: string; name: ApiFunctionName; measured: () => { result: WarmResult; units: typeof zero } }> = [
    measuredAs('listPets', 'listPets'),
    measuredAs('createPet', 'createPet'),
    // Its DynamoDB writes as measured; its duration is the unkeyed create's, which the bench times.
    measuredAs('createPet, new Idempotency-Key', 'createPet'),
    measuredAs('getPet', 'getPet'),
    { operation: 'anonymous (401)', name: 'listPets', measured: () => ({ result: warm.get('listPets')!.anonymous, units: zero }) },
  ];
  return operations
    .filter(({ name }) => isDeployed(name))
    .map(({ operation, name, measured }) => {
      const { result, units } = measured();
      const anonymous = operation.startsWith('anonymous');
      const auth = anonymous ? productionAuthorizer.missing : productionAuthorizer.cached;
      const api = PRICES.httpApiPerMillionRequests;
      const invocations = 2 * PRICES.lambdaPerMillionInvocations;
      const duration = durationCost(name, billedMs(name, result)) + durationCost('authorizer', billedMs('authorizer', auth));
      const dynamoDb = units.readUnits * PRICES.dynamoDbPerMillionReadUnits + units.writeUnits * PRICES.dynamoDbPerMillionWriteUnits;
      const logBytes = result.logBytesPerRequest + auth.logBytesPerRequest + LOG_BYTES_BESIDE_FUNCTIONS;
      const logs = ((logBytes * 1e6) / 1024 ** 3) * PRICES.logsPerGbIngested;
      const total = api + invocations + duration + dynamoDb + logs;
      const floor = api + invocations + dynamoDb;
      return {
        operation,
        'HTTP API': dollars(api),
        'Lambda requests': dollars(invocations),
        'Lambda duration': dollars(duration),
        DynamoDB: dollars(dynamoDb),
        'log bytes': Math.round(logBytes),
        logs: dollars(logs),
        'per million': dollars(total),
        floor: dollars(floor),
        'to floor': Number((total / floor).toFixed(2)),
        total,
      };
    });
}
