import { createAnimalStoreApp } from './animal-store-app';

// Reads nothing from the environment: each stage's account and region are in infra/stages.ts, so
// every machine synthesizes the same templates, with or without credentials, and one assembly can
// be deployed to staging, smoke-tested, then deployed unchanged to production.
const { app } = createAnimalStoreApp();
app.synth();
