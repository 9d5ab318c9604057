import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checksFor, keylessChecksFor, type Check } from '../../../functions/pre-traffic-hook/pre-traffic-expectations';
import { hookStatus, judge, judgeAgainstOld, type InvocationOutcome } from '../../../functions/pre-traffic-hook/verdicts';
import { API_FUNCTIONS, type ApiFunctionName } from '../../../shared/facts/function-names';
import { PRE_TRAFFIC_ANSWERS_PATH, RECORDING_CONTEXT, type PreTrafficAnswers } from '../../../tools/record-pre-traffic-answers';

/**
 * The answers each function's handler gave each check, in order, recorded against dynalite by
 * `npm run record:pre-traffic` (test/infra/bundles.test.ts checks that the bundles' live answers still pass).
 */
const RECORDED: PreTrafficAnswers = JSON.parse(readFileSync(PRE_TRAFFIC_ANSWERS_PATH, 'utf8'));

/** The run the answers were recorded for: the keys the recorded authorizer judged, so their ids are the ones the answers name. */
const context = RECORDING_CONTEXT;

function check(fn: ApiFunctionName, index: number): Check {
  return checksFor(fn, context)[index]!;
}

function recorded(fn: ApiFunctionName, index: number): { statusCode: number; headers: Record<string, string>; body: string } {
  return structuredClone(RECORDED[fn][index]) as { statusCode: number; headers: Record<string, string>; body: string };
}

const returned = (payload: unknown): InvocationOutcome => ({ kind: 'returned', payload });

describe('the verdict on a check', () => {
  it('passes every check of every function on the answers the real bundles gave', () => {
    for (const fn of API_FUNCTIONS) {
      const checks = checksFor(fn, context);
      expect(checks.length, fn).toBe(RECORDED[fn].length);
      checks.forEach((each, index) => {
        const verdict = judge(each, returned(RECORDED[fn][index]));
        expect(verdict, `${fn}: ${each.name}`).toEqual({ check: each.name, passed: true, detail: expect.any(String) });
      });
    }
  });

  it('says what passed: the status and the code, the list, or the authorizer’s verdict', () => {
    expect(judge(check('getPet', 1), returned(recorded('getPet', 1))).detail).toBe('answered 404 not_found');
    expect(judge(check('listPets', 1), returned(recorded('listPets', 1))).detail).toBe('answered 200 with a list');
    expect(judge(check('authorizer', 0), returned(RECORDED.authorizer[0])).detail).toBe('authorized with the verdict invalid');
    expect(judge(check('authorizer', 2), returned(RECORDED.authorizer[2])).detail).toBe(
      'authorized with the verdict allowed as key_3f9a0c5e71b2d846',
    );
  });

  it('checks the authorizer with each key issued for the run, and without them only with the checks that need none', () => {
    const [, , withExpiry, withoutExpiry, revoked] = checksFor('authorizer', context);
    const { checkKeys } = context;
    expect(JSON.stringify(withExpiry!.event)).toContain(`"authorization":"Bearer ${checkKeys.withExpiry.apiKey}"`);
    expect(JSON.stringify(withoutExpiry!.event)).toContain(`"authorization":"Bearer ${checkKeys.withoutExpiry.apiKey}"`);
    expect(JSON.stringify(revoked!.event)).toContain(`"authorization":"Bearer ${checkKeys.revoked.apiKey}"`);
    const { checkKeys: _none, ...keyless } = context;
    expect(() => checksFor('authorizer', keyless)).toThrow(/keys the keys table holds/);
    const withoutKeys = keylessChecksFor('authorizer', keyless);
    expect(withoutKeys).toEqual(checksFor('authorizer', context).slice(0, withoutKeys.length));
    expect(JSON.stringify(withoutKeys)).not.toContain('check-key-for-the-test');
  });

  it('asks every other function the same with keys or without', () => {
    for (const fn of API_FUNCTIONS.filter((name) => name !== 'authorizer')) {
      expect(keylessChecksFor(fn, context), fn).toEqual(checksFor(fn, context));
    }
  });

  describe('fails', () => {
    it('an anonymous request the route served instead of refusing', () => {
      const verdict = judge(check('listPets', 0), returned(recorded('listPets', 1)));
      expect(verdict).toEqual(expect.objectContaining({ passed: false, detail: 'answered 200, expected 401' }));
    });

    it('a listing that failed, naming the error code it answered', () => {
      const failed = {
        ...recorded('listPets', 1),
        statusCode: 500,
        body: JSON.stringify({ code: 'internal_error', message: 'The service failed to process the request.', status: 500 }),
      };
      expect(judge(check('listPets', 1), returned(failed)).detail).toBe('answered 500 internal_error, expected 200');
    });

    it('a listing that is not a list', () => {
      const answer = { ...recorded('listPets', 1), body: '{"pets":[]}' };
      expect(judge(check('listPets', 1), returned(answer))).toEqual(expect.objectContaining({ passed: false }));
    });

    it('the right status with a body that is not our Error (API Gateway’s own, say)', () => {
      const answer = { ...recorded('routeNotFound', 0), body: '{"message":"Unauthorized"}' };
      const verdict = judge(check('routeNotFound', 0), returned(answer));
      expect(verdict.passed).toBe(false);
      expect(verdict.detail).toMatch(/^answered 401 without our Error body/);
    });

    it('the right status with another error code', () => {
      const answer = {
        ...recorded('createPet', 1),
        body: JSON.stringify({ code: 'invalid_body', message: 'The request body must be a JSON object.', status: 400 }),
      };
      expect(judge(check('createPet', 1), returned(answer)).detail).toBe('answered 400 invalid_body, expected invalid_parameter');
    });

    it('an Error body whose status disagrees with the answer’s', () => {
      const answer = { ...recorded('getPet', 1), body: JSON.stringify({ code: 'not_found', message: 'No pet.', status: 400 }) };
      expect(judge(check('getPet', 1), returned(answer)).detail).toBe('answered 404 with an Error body saying 400');
    });

    it('an answer without a JSON content type', () => {
      const answer = { ...recorded('getPet', 1), headers: {} };
      expect(judge(check('getPet', 1), returned(answer)).detail).toBe('answered 404 without a JSON content type');
    });

    it('something that is not an HTTP answer at all', () => {
      for (const payload of [null, 'OK', { statusCode: '404' }]) {
        expect(judge(check('getPet', 1), returned(payload)).detail, JSON.stringify(payload)).toMatch(/^not an HTTP answer/);
      }
    });

    it('an authorizer whose key lookup failed: unavailable is not a refusal after a lookup', () => {
      const verdict = judge(check('authorizer', 0), returned({ isAuthorized: true, context: { outcome: 'unavailable' } }));
      expect(verdict).toEqual(expect.objectContaining({ passed: false, detail: 'the verdict was unavailable, expected invalid' }));
    });

    it('an authorizer that lets an unknown key in, or answers API Gateway with a refusal of its own', () => {
      const allowed = judge(check('authorizer', 0), returned({ isAuthorized: true, context: { outcome: 'allowed', keyId: 'key_x' } }));
      expect(allowed.detail).toBe('the verdict was allowed, expected invalid');
      const refused = judge(check('authorizer', 0), returned({ isAuthorized: false }));
      expect(refused.passed).toBe(false);
      expect(refused.detail).toMatch(/^not an authorizer answer we give/);
    });

    it('an authorizer that refuses a key the keys table holds', () => {
      const verdict = judge(check('authorizer', 2), returned({ isAuthorized: true, context: { outcome: 'invalid' } }));
      expect(verdict).toEqual(expect.objectContaining({ passed: false, detail: 'the verdict was invalid, expected allowed' }));
    });

    it('an authorizer that refuses a key without an expiry, as every client’s key is', () => {
      const verdict = judge(check('authorizer', 3), returned({ isAuthorized: true, context: { outcome: 'invalid' } }));
      expect(verdict).toEqual(expect.objectContaining({ passed: false, detail: 'the verdict was invalid, expected allowed' }));
    });

    it('an authorizer that accepts a revoked key', () => {
      const accepted = { isAuthorized: true, context: { outcome: 'allowed', keyId: context.checkKeys.revoked.keyId } };
      const verdict = judge(check('authorizer', 4), returned(accepted));
      expect(verdict).toEqual(expect.objectContaining({ passed: false, detail: 'the verdict was allowed, expected invalid' }));
    });

    it('an authorizer that accepts the key as another one', () => {
      const verdict = judge(check('authorizer', 2), returned({ isAuthorized: true, context: { outcome: 'allowed', keyId: 'key_x' } }));
      expect(verdict).toEqual(expect.objectContaining({ passed: false, detail: 'allowed as key_x, expected key_3f9a0c5e71b2d846' }));
    });

    it('a version that failed to start', () => {
      const outcome: InvocationOutcome = {
        kind: 'function-error',
        errorType: 'Error',
        errorMessage: 'Invalid configuration: PETS_TABLE_NAME is required',
      };
      expect(judge(check('getPet', 1), outcome)).toEqual(
        expect.objectContaining({
          passed: false,
          detail: 'the function failed: Error: Invalid configuration: PETS_TABLE_NAME is required',
        }),
      );
    });

    it('a version that timed out', () => {
      const outcome: InvocationOutcome = {
        kind: 'function-error',
        errorType: 'Sandbox.Timedout',
        errorMessage: 'RequestId: 0b1a Error: Task timed out after 10.00 seconds',
      };
      expect(judge(check('listPets', 1), outcome).detail).toBe(
        'the function failed: Sandbox.Timedout: RequestId: 0b1a Error: Task timed out after 10.00 seconds',
      );
    });

    it('an invocation that threw or never answered', () => {
      const throttled = judge(check('createPet', 1), { kind: 'no-answer', reason: 'TooManyRequestsException: Rate Exceeded.' });
      expect(throttled).toEqual(expect.objectContaining({ passed: false, detail: 'no answer: TooManyRequestsException: Rate Exceeded.' }));
      expect(judge(check('createPet', 1), { kind: 'no-answer', reason: 'nothing within 25000 ms' }).passed).toBe(false);
    });
  });
});

describe('the verdict on a check the new version failed, once the old version was asked the same', () => {
  const storeDown = returned({
    statusCode: 503,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
    body: JSON.stringify({ code: 'service_unavailable', message: 'The service is temporarily unavailable.', status: 503 }),
  });
  const internalError = returned({
    statusCode: 500,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code: 'internal_error', message: 'The service failed to process the request.', status: 500 }),
  });
  const crashed: InvocationOutcome = { kind: 'function-error', errorType: 'Error', errorMessage: 'Invalid configuration' };
  const notFound = check('getPet', 1);

  it('excuses a failure the old version shows the same way, and says so', () => {
    const verdict = judgeAgainstOld(notFound, storeDown, { version: '6', outcome: storeDown });
    expect(verdict).toEqual({
      check: notFound.name,
      passed: true,
      excused: true,
      detail: 'answered 503 service_unavailable, expected 404: fails the same way on version 6',
    });
  });

  it('excuses a crash the old version has the same way', () => {
    expect(judgeAgainstOld(notFound, crashed, { version: '6', outcome: crashed })).toEqual(
      expect.objectContaining({ passed: true, excused: true }),
    );
  });

  it('fails a new version whose failure the old version does not have, naming what the old one answered', () => {
    const verdict = judgeAgainstOld(notFound, internalError, { version: '6', outcome: returned(recorded('getPet', 1)) });
    expect(verdict).toEqual({
      check: notFound.name,
      passed: false,
      detail: 'answered 500 internal_error, expected 404 (passes on version 6)',
    });
  });

  it('fails a new version that fails otherwise than the old one', () => {
    const verdict = judgeAgainstOld(notFound, internalError, { version: '6', outcome: storeDown });
    expect(verdict.passed).toBe(false);
    expect(verdict.detail).toBe('answered 500 internal_error, expected 404 (version 6: answered 503 service_unavailable, expected 404)');
    expect(judgeAgainstOld(notFound, crashed, { version: '6', outcome: storeDown }).passed).toBe(false);
  });

  it('never excuses a check that reached neither version: nothing was judged', () => {
    const throttled: InvocationOutcome = { kind: 'no-answer', reason: 'TooManyRequestsException: Rate Exceeded.' };
    expect(judgeAgainstOld(notFound, throttled, { version: '6', outcome: throttled })).toEqual(expect.objectContaining({ passed: false }));
  });

  it('leaves a check the new version passed as it is', () => {
    const verdict = judgeAgainstOld(notFound, returned(recorded('getPet', 1)), { version: '6', outcome: storeDown });
    expect(verdict).toEqual({ check: notFound.name, passed: true, detail: 'answered 404 not_found' });
  });
});

describe('the status reported to CodeDeploy', () => {
  const pass = { check: 'p', passed: true, detail: 'answered 404 not_found' };
  const fail = { check: 'q', passed: false, detail: 'answered 500, expected 404' };

  it('is Succeeded when every check passed', () => {
    expect(hookStatus([pass, pass])).toBe('Succeeded');
  });

  it('is Failed when any check failed', () => {
    expect(hookStatus([pass, fail, pass])).toBe('Failed');
  });

  it('is Succeeded when every check passed or was excused', () => {
    expect(hookStatus([pass, { ...fail, passed: true, excused: true }])).toBe('Succeeded');
  });

  it('is Failed when nothing was judged', () => {
    expect(hookStatus([])).toBe('Failed');
  });
});
