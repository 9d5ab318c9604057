import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration suites start dynalite and bundle handlers; CDK synthesis takes seconds too.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Functions log at WARN and above on purpose in some suites; silence them unless a test asks.
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT' },
  },
});
