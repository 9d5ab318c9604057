import { createAnimalStoreApp } from './animal-store-app';

// The only place that reads the environment. The CLI sets CDK_DEFAULT_ACCOUNT/REGION from the
// credentials and profile it finds; offline, without credentials, the account stays unknown and
// the stacks environment-agnostic. Nothing in them needs a concrete account or region, or a lookup.
const { app } = createAnimalStoreApp({
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
