/**
 * Saves process.env and returns a function that puts it back, for a test that changes the
 * environment of handlers it runs in this process (the local API's run in their own instances).
 */
export function snapshotEnv(): () => void {
  const saved = { ...process.env };
  return () => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  };
}
