import { writeOperationFiles } from '../local/operation-files';

// `npm run generate`, first step: what the functions bundle of each operation's file, the registry and the sample
// events (local/operation-files.ts), rewritten where they differ from shared/operations/.
const written = await writeOperationFiles();
console.log(written.length === 0 ? 'The files written from shared/operations/ are up to date.' : `Wrote ${written.join(', ')}`);
