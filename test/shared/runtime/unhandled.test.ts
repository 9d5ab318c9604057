import { describe, expect, it } from 'vitest';
import { unhandled } from '../../../shared/runtime/unhandled';

type Kind = 'listing' | 'error';

describe('the default of a switch over a closed union', () => {
  it('compiles once every member has its case', () => {
    const say = (kind: Kind) => {
      switch (kind) {
        case 'listing':
          return 'a list';
        case 'error':
          return 'an Error body';
        default:
          return unhandled(kind);
      }
    };
    expect(say('error')).toBe('an Error body');
  });

  it('does not compile while a member has none, and throws naming it if run anyway', () => {
    const say = (kind: Kind) => {
      switch (kind) {
        case 'listing':
          return 'a list';
        default:
          // @ts-expect-error: 'error' has no case (npm run typecheck fails without this line).
          return unhandled(kind);
      }
    };
    expect(() => say('error')).toThrow('No case for "error"');
  });
});
