import { expect } from 'vitest';
import { resourcesOfType, type CfnTemplate } from '../../tools/lambda/synth';

/** Every statement of the policies a template attaches to the role of this logical id. */
export function statementsOfRole(json: CfnTemplate, roleId: string): unknown[] {
  const role = JSON.stringify({ Ref: roleId });
  return Object.values(resourcesOfType(json, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties!.Roles as unknown[]).some((r) => JSON.stringify(r) === role))
    .flatMap((policy) => policy.Properties!.PolicyDocument.Statement as unknown[]);
}

/**
 * Allow statements as the (action, resource) pairs they grant, sorted: IAM means the same whether CDK writes two
 * statements or merges them into one with both actions.
 */
export function grantsOf(statements: readonly unknown[]): string[] {
  return statements
    .flatMap((statement) => {
      const { Effect, Action, Resource } = statement as { Effect: string; Action: string | string[]; Resource: unknown };
      expect(Effect).toBe('Allow');
      const resources = Array.isArray(Resource) ? Resource : [Resource];
      return [Action].flat().flatMap((action) => resources.map((resource) => `${action} ${JSON.stringify(resource)}`));
    })
    .sort();
}
