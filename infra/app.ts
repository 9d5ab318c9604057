import { createAnimalStoreApp } from './animal-store-app';

// Reads nothing from the environment, so every machine synthesizes the same templates and one
// assembly can be deployed to staging, then unchanged to production.
const { app } = createAnimalStoreApp();
app.synth();
