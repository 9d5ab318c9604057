import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration suites start dynalite and bundle handlers; CDK synthesis takes seconds too.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Functions log at WARN and above on purpose in some suites; silence them, and their metric
    // lines, unless a test asks (test/api/metrics.test.ts does).
    env: { POWERTOOLS_LOG_LEVEL: 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
});
