import type * as v from 'valibot';

/**
 * Message for a strict object's own issues, worded to follow the field name that parseInput puts
 * in front of it: a missing required key, a key outside the contract, or a non-object.
 */
export function objectIssueMessage(unknownKey: string) {
  return (issue: v.BaseIssue<unknown>): string => {
    if (issue.expected === 'never') return unknownKey;
    if (issue.received === 'undefined') return 'is required';
    return 'must be a JSON object';
  };
}
