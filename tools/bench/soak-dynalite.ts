import { startDynalite } from '../../local/dynamodb-local';

/**
 * The embedded DynamoDB of `npm start` (dynalite, in memory) in a process of its own, for the soak
 * (tools/bench/soak.ts) to measure apart from the API. Prints its endpoint; stops on SIGTERM or SIGINT.
 */
const dynamoDb = await startDynalite({ port: 0 });
process.stdout.write(`dynalite ${dynamoDb.endpoint}\n`);
const stop = () => void dynamoDb.close().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
