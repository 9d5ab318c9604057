import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the shared synthesis of each worker writes its assembly (test/helpers/synthesized-app.ts). */
    synthesisDir: string;
  }
}

/** Global setup of the infra project: one directory for the run's assemblies, removed when the run ends. */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-synthesis-'));
  project.provide('synthesisDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
