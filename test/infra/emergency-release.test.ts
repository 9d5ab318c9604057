import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreApp, EMERGENCY_ARGUMENT, emergencyOf, REFUSED_EMERGENCY_CONTEXT } from '../../infra/animal-store-app';
import { RELEASE_KIND_OUTPUT } from '../../infra/release-kind';
import { stages } from '../../infra/stages';
import { resourcesOfType, synthesize, type CfnResourceJson, type CfnTemplate, type Synthesis } from '../../tools/lambda/synth';
import { templateDisagreements } from '../../tools/release';

/** Bundles are the same in both kinds of release, and skipping them keeps both syntheses comparable and quick. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

let ordinary: Synthesis;
let emergency: Synthesis;
beforeAll(() => {
  ordinary = synthesize({ context: NO_BUNDLING });
  emergency = synthesize({ context: NO_BUNDLING, emergency: true });
});
afterAll(() => {
  ordinary?.dispose();
  emergency?.dispose();
});

const releases = () => [
  { kind: 'ordinary', synthesis: ordinary },
  { kind: 'emergency', synthesis: emergency },
];

describe('what makes a release an emergency one', () => {
  it.each([true, 'true', false, 'false'])(
    'is never context: the key set to %j, from ~/.cdk.json as from anywhere, stops synthesis and says where to remove it',
    (value) => {
      expect(() => createAnimalStoreApp({ context: { ...NO_BUNDLING, [REFUSED_EMERGENCY_CONTEXT]: value } })).toThrow(
        `The context key "emergency" is set; remove it from ~/.cdk.json, cdk.json, cdk.context.json or --context`,
      );
    },
  );

  it('is the app’s one argument, --emergency, which npm run release -- --emergency passes; any other argument is refused', () => {
    expect(emergencyOf([])).toBe(false);
    expect(emergencyOf([EMERGENCY_ARGUMENT])).toBe(true);
    for (const args of [['--emergency=false'], ['--emergency', '--emergency'], ['-c', 'emergency=true']]) {
      expect(() => emergencyOf(args), args.join(' ')).toThrow('The app takes no argument but --emergency');
    }
  });
});

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

  it('says in its ReleaseKind output which kind of release it runs, an emergency one with the way back', () => {
    const output = (synthesis: Synthesis) => json(synthesis).Outputs![RELEASE_KIND_OUTPUT] as { Value: string; Description: string };
    expect(output(ordinary).Value).toBe('ordinary');
    expect(output(emergency).Value).toBe('emergency');
    expect(output(emergency).Description).toMatch(
      /no alarm rolls a deployment back\. Way back: deploy the same commit as an ordinary release/,
    );
  });

  it('heads its dashboard, in an emergency release only, with a notice that no alarm rolls back and the way back', () => {
    const first = (synthesis: Synthesis) => dashboardWidgets(json(synthesis))[0]!;
    expect(first(ordinary).type).toBe('alarm');
    expect(first(emergency)).toMatchObject({ type: 'text', y: 0, width: 24 });
    expect(first(emergency).properties.markdown).toMatch(
      /^# Emergency release: no alarm rolls a deployment back\n.*Way back: deploy the same commit as an ordinary release/,
    );
  });

  it('goes back from an emergency release to the same commit’s ordinary one without moving a function: only its deployment groups, dashboard and ReleaseKind change', () => {
    const [before, after] = [json(emergency), json(ordinary)];
    const ids = new Set([...Object.keys(before.Resources), ...Object.keys(after.Resources)]);
    const changed = [...ids].filter((id) => JSON.stringify(before.Resources[id]) !== JSON.stringify(after.Resources[id]));
    expect(new Set(changed.map((id) => after.Resources[id]?.Type))).toEqual(
      new Set(['AWS::CodeDeploy::DeploymentGroup', 'AWS::CloudWatch::Dashboard']),
    );
    const outputs = new Set([...Object.keys(before.Outputs ?? {}), ...Object.keys(after.Outputs ?? {})]);
    expect([...outputs].filter((key) => JSON.stringify(before.Outputs?.[key]) !== JSON.stringify(after.Outputs?.[key]))).toEqual([
      RELEASE_KIND_OUTPUT,
    ]);
  });

  it('agrees with release.json only when its "emergency" names the kind of release the template is', () => {
    expect(templateDisagreements(json(ordinary), false)).toEqual([]);
    expect(templateDisagreements(json(emergency), true)).toEqual([]);
    const groups = Object.keys(resourcesOfType(json(ordinary), 'AWS::CodeDeploy::DeploymentGroup'));
    expect(templateDisagreements(json(emergency), false)).toEqual([
      ...groups.map((id) => `group ${id} is all at once with alarms ignored`),
      `output ${RELEASE_KIND_OUTPUT} is "emergency"`,
    ]);
    expect(templateDisagreements(json(ordinary), true)).toEqual([
      ...groups.map((id) => `group ${id} is CodeDeployDefault.LambdaCanary10Percent5Minutes with alarms polled`),
      `output ${RELEASE_KIND_OUTPUT} is "ordinary"`,
    ]);
  });
});

interface AliasJson extends CfnResourceJson {
  readonly DependsOn: string[];
  readonly UpdatePolicy: { readonly CodeDeployLambdaAliasUpdate: { readonly DeploymentGroupName: { readonly Ref: string } } };
}

interface Widget {
  readonly type: string;
  readonly y: number;
  readonly width: number;
  readonly properties: { readonly markdown?: string };
}

/** The dashboard's widgets in order, each reference in its body read as its logical id. */
function dashboardWidgets(json: CfnTemplate): Widget[] {
  const [dashboard] = Object.values(resourcesOfType(json, 'AWS::CloudWatch::Dashboard'));
  const [, parts] = (dashboard!.Properties!.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  const text = parts.map((part) => (typeof part === 'string' ? part : ((part as { Ref?: string }).Ref ?? '?'))).join('');
  return (JSON.parse(text) as { widgets: Widget[] }).widgets;
}
