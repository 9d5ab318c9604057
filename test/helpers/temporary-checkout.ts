import { cp, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

/** What `npm start`, `npm run dev` and `npm run invoke` read: the sources, the local runtime and what they import. */
const CHECKED_OUT = ['package.json', 'tsconfig.json', 'openapi.json', 'functions', 'shared', 'local'];

export interface TemporaryCheckout {
  readonly root: string;
  /** The text of a file, by its path in the checkout. */
  read(path: string): Promise<string>;
  /** Saves a file, as an editor does. */
  write(path: string, text: string): Promise<void>;
  remove(): Promise<void>;
}

/**
 * A copy of the project in a folder of its own, to edit as a developer does while the tool runs, the
 * project's own files untouched. It shares the project's node_modules (a link), so the bundles resolve
 * their packages as in the project.
 */
export async function createTemporaryCheckout(): Promise<TemporaryCheckout> {
  // Its real path: the one the stacks and the server's project root name.
  const root = await realpath(await mkdtemp(join(tmpdir(), 'animal-store-checkout-')));
  await Promise.all(CHECKED_OUT.map((entry) => cp(join(PROJECT_ROOT, entry), join(root, entry), { recursive: true })));
  await symlink(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  return {
    root,
    read: (path) => readFile(join(root, path), 'utf8'),
    write: (path, text) => writeFile(join(root, path), text),
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
