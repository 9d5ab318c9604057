/**
 * Saves process.env and returns a function that puts it back. Handlers read their environment at
 * cold start and startLocalApi() rewrites it, so a test that starts a second API or changes the
 * environment restores it for the handlers that cold-start after it.
 */
export function snapshotEnv(): () => void {
  const saved = { ...process.env };
  return () => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  };
}
