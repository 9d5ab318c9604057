import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMERGENCY_CONTEXT } from '../../infra/animal-store-app';
import { stages } from '../../infra/stages';
import { resourcesOfType, synthesize, type CfnResourceJson, type CfnTemplate, type Synthesis } from '../../tools/lambda/synth';

/** Bundles are the same in both kinds of release, and skipping them keeps both syntheses comparable and quick. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

let ordinary: Synthesis;
let emergency: Synthesis;
beforeAll(() => {
  ordinary = synthesize({ context: NO_BUNDLING });
  emergency = synthesize({ context: { ...NO_BUNDLING, [EMERGENCY_CONTEXT]: true } });
});
afterAll(() => {
  ordinary?.dispose();
  emergency?.dispose();
});

const releases = () => [
  { kind: 'ordinary', synthesis: ordinary },
  { kind: 'emergency', synthesis: emergency },
];

describe.each(stages)('the $name stage', ({ name }) => {
  const json = (synthesis: Synthesis): CfnTemplate => synthesis.stage(name).json;

  it('moves each live alias only after its own deployment group, the one its UpdatePolicy names, in either kind of release', () => {
    for (const { kind, synthesis } of releases()) {
      const aliases = Object.entries(resourcesOfType(json(synthesis), 'AWS::Lambda::Alias')) as [string, AliasJson][];
      const groups = Object.keys(resourcesOfType(json(synthesis), 'AWS::CodeDeploy::DeploymentGroup'));
      expect(aliases.length, kind).toBe(groups.length);
      for (const [id, alias] of aliases) {
        const group = alias.UpdatePolicy.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref;
        expect(groups, `${kind} ${id}`).toContain(group);
        expect(alias.DependsOn, `${kind} ${id}`).toContain(group);
      }
    }
  });
});

interface AliasJson extends CfnResourceJson {
  readonly DependsOn: string[];
  readonly UpdatePolicy: { readonly CodeDeployLambdaAliasUpdate: { readonly DeploymentGroupName: { readonly Ref: string } } };
}
