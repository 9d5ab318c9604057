import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import type { DomainConfig } from '../../infra/stages';
import { buildBareHttpApi } from '../helpers/bare-http-api';

const REGION = 'eu-west-1';
const CERTIFICATE_ARN = `arn:aws:acm:${REGION}:123456789012:certificate/0a1b2c3d-example`;
const ZONE = { hostedZoneId: 'Z0EXAMPLEZONE', zoneName: 'example.org' };

/** The API construct on a bare stack in a known region, with the given domain. */
function build(domain?: DomainConfig) {
  const { stack, api } = buildBareHttpApi({ domain }, { env: { account: '123456789012', region: REGION } });
  return { stack, api, template: () => Template.fromStack(stack) };
}

function only(template: Template, type: string) {
  const resources = Object.entries(template.findResources(type));
  expect(resources, type).toHaveLength(1);
  const [id, resource] = resources[0]!;
  return { id, properties: resource.Properties };
}

describe('the API with a custom domain', () => {
  it('serves the domain as a regional endpoint with TLS 1.2 at least', () => {
    const { template } = build({ domainName: 'api.example.org', certificateArn: CERTIFICATE_ARN });
    expect(only(template(), 'AWS::ApiGatewayV2::DomainName').properties).toEqual({
      DomainName: 'api.example.org',
      DomainNameConfigurations: [{ CertificateArn: CERTIFICATE_ARN, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' }],
    });
  });

  it('maps the domain root to the $default stage, so /v1/pets on the domain is the route /v1/pets', () => {
    const { stack, api, template } = build({ domainName: 'api.example.org', certificateArn: CERTIFICATE_ARN });
    const domain = only(template(), 'AWS::ApiGatewayV2::DomainName');
    expect(only(template(), 'AWS::ApiGatewayV2::ApiMapping').properties).toEqual({
      ApiId: { Ref: stack.getLogicalId(api.httpApi.node.defaultChild as never) },
      DomainName: { Ref: domain.id },
      Stage: '$default',
    });
  });

  it('gives the base URL on the domain and turns the execute-api endpoint off', () => {
    const { api, template } = build({ domainName: 'api.example.org', certificateArn: CERTIFICATE_ARN });
    expect(api.baseUrl).toBe('https://api.example.org/v1');
    expect(only(template(), 'AWS::ApiGatewayV2::Api').properties.DisableExecuteApiEndpoint).toBe(true);
  });

  it('uses a given certificate as it is: requests none and adds no DNS record without a zone', () => {
    const { template } = build({ domainName: 'api.example.org', certificateArn: CERTIFICATE_ARN });
    template().resourceCountIs('AWS::CertificateManager::Certificate', 0);
    template().resourceCountIs('AWS::Route53::RecordSet', 0);
  });

  it('requests a certificate validated by DNS in the hosted zone when given only the zone', () => {
    const { template } = build({ domainName: 'api.example.org', hostedZone: ZONE });
    const certificate = only(template(), 'AWS::CertificateManager::Certificate');
    expect(certificate.properties).toMatchObject({
      DomainName: 'api.example.org',
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: 'api.example.org', HostedZoneId: ZONE.hostedZoneId }],
    });
    expect(only(template(), 'AWS::ApiGatewayV2::DomainName').properties.DomainNameConfigurations[0].CertificateArn).toEqual({
      Ref: certificate.id,
    });
  });

  it('points an alias A record in the zone at the regional domain', () => {
    const { template } = build({ domainName: 'api.example.org', hostedZone: ZONE });
    const domain = only(template(), 'AWS::ApiGatewayV2::DomainName');
    expect(only(template(), 'AWS::Route53::RecordSet').properties).toEqual({
      HostedZoneId: ZONE.hostedZoneId,
      Name: 'api.example.org.',
      Type: 'A',
      AliasTarget: {
        DNSName: { 'Fn::GetAtt': [domain.id, 'RegionalDomainName'] },
        HostedZoneId: { 'Fn::GetAtt': [domain.id, 'RegionalHostedZoneId'] },
      },
    });
  });

  it('adds only the record when given both a certificate and a zone', () => {
    const { template } = build({ domainName: 'api.example.org', certificateArn: CERTIFICATE_ARN, hostedZone: ZONE });
    template().resourceCountIs('AWS::CertificateManager::Certificate', 0);
    template().resourceCountIs('AWS::Route53::RecordSet', 1);
    expect(only(template(), 'AWS::ApiGatewayV2::DomainName').properties.DomainNameConfigurations[0].CertificateArn).toBe(CERTIFICATE_ARN);
  });

  it('accepts the zone apex as the domain', () => {
    const { template } = build({ domainName: 'example.org', hostedZone: ZONE });
    expect(only(template(), 'AWS::Route53::RecordSet').properties.Name).toBe('example.org.');
  });
});

describe('the API without a custom domain', () => {
  it('keeps the execute-api endpoint, its base URL, and has no domain, certificate or record', () => {
    const { api, template } = build();
    expect(only(template(), 'AWS::ApiGatewayV2::Api').properties.DisableExecuteApiEndpoint).toBe(false);
    expect(JSON.stringify(Stack.of(api).resolve(api.baseUrl))).toContain('execute-api');
    for (const type of ['AWS::ApiGatewayV2::DomainName', 'AWS::ApiGatewayV2::ApiMapping', 'AWS::CertificateManager::Certificate']) {
      template().resourceCountIs(type, 0);
    }
  });
});

describe('a custom domain configured wrongly', () => {
  it('refuses a domain with neither a certificate nor a hosted zone, naming the stack and both fields', () => {
    expect(() => build({ domainName: 'api.example.org' })).toThrow(
      /custom domain of Bare .*domain\.certificateArn and domain\.hostedZone are both unset/,
    );
  });

  it("refuses a certificate from another region: a regional domain needs one of the stage's own region", () => {
    expect(() => build({ domainName: 'api.example.org', certificateArn: CERTIFICATE_ARN.replace(REGION, 'us-east-1') })).toThrow(
      /domain\.certificateArn is in us-east-1, but the stage deploys to eu-west-1/,
    );
  });

  it('refuses a certificate ARN that is not an ACM certificate', () => {
    expect(() => build({ domainName: 'api.example.org', certificateArn: 'arn:aws:iam::123456789012:server-certificate/api' })).toThrow(
      /domain\.certificateArn .* is not an ACM certificate ARN/,
    );
  });

  it('refuses a domain outside the hosted zone, even one that merely ends like it', () => {
    for (const domainName of ['api.example.net', 'api.notexample.org']) {
      expect(() => build({ domainName, hostedZone: ZONE }), domainName).toThrow(
        /domain\.domainName .* is not inside domain\.hostedZone\.zoneName example\.org/,
      );
    }
  });
});
