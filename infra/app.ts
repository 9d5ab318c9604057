import { createAnimalStoreApp } from './animal-store-app';

// The only place that reads the environment. The CLI sets CDK_DEFAULT_ACCOUNT/REGION from the
// credentials it finds; without any (offline `cdk synth`), the stacks stay environment-agnostic,
// which needs no lookups: nothing in them depends on a concrete account or region.
const { app } = createAnimalStoreApp({
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
