import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PRE_TRAFFIC_ANSWERS_PATH, recordPreTrafficAnswers, renderPreTrafficAnswers } from '../../tools/record-pre-traffic-answers';

describe("the functions' recorded answers to the pre-traffic checks", () => {
  it('are what `npm run record:pre-traffic` records from the handlers now', async () => {
    const recorded = renderPreTrafficAnswers(await recordPreTrafficAnswers());
    expect(
      readFileSync(PRE_TRAFFIC_ANSWERS_PATH, 'utf8'),
      'test/fixtures/pre-traffic-answers.json is stale: run npm run record:pre-traffic',
    ).toBe(recorded);
  }, 60_000);
});
