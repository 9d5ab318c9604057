import { createAnimalStoreApp, emergencyOf } from './animal-store-app';

// Reads nothing from the environment, so every machine synthesizes the same templates and one
// assembly can be deployed to staging, then unchanged to production. Its command line says only
// whether the release is an emergency one, and only `npm run release -- --emergency` says so.
const { app } = createAnimalStoreApp({ emergency: emergencyOf(process.argv.slice(2)) });
app.synth();
