import { Arn, ArnFormat, Stack, Token } from 'aws-cdk-lib';
import { ApiMapping, DomainName, EndpointType, SecurityPolicy, type HttpApi, type HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate, CertificateValidation, type ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayv2DomainProperties } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import type { DomainConfig } from './stages';

export interface ApiDomainProps {
  /** The domain, its certificate and hosted zone, as the stage configures them. */
  readonly domain: DomainConfig;
  /** The API served at the domain. */
  readonly httpApi: HttpApi;
  /** The stage the domain maps to, at its root: the routes already start with the version. */
  readonly stage: HttpStage;
}

/**
 * A custom domain for the HTTP API: a regional domain name mapped to the stage, with its ACM certificate
 * and, when a hosted zone is given, the alias record (docs/operations.md, "Custom domain").
 */
export class ApiDomain extends Construct {
  readonly domainName: DomainName;
  /** The certificate the domain serves: the configured one, or the one this construct requested. */
  readonly certificate: ICertificate;
  /** The alias record in the hosted zone; undefined when DNS is managed outside the stack. */
  readonly aliasRecord?: ARecord;

  constructor(scope: Construct, id: string, props: ApiDomainProps) {
    super(scope, id);
    const { domain } = props;
    const problems = domainProblems(domain, Stack.of(this).region);
    if (problems.length > 0) {
      throw new Error(`The custom domain of ${Stack.of(this).stackName} (domain in infra/stages.ts): ${problems.join(' ')}`);
    }

    // Imported by id and name, never looked up: synthesis stays offline and needs no credentials.
    const zone = domain.hostedZone && HostedZone.fromHostedZoneAttributes(this, 'Zone', domain.hostedZone);
    this.certificate = domain.certificateArn
      ? Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn)
      : new Certificate(this, 'Certificate', { domainName: domain.domainName, validation: CertificateValidation.fromDns(zone) });

    this.domainName = new DomainName(this, 'DomainName', {
      domainName: domain.domainName,
      certificate: this.certificate,
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new ApiMapping(this, 'Mapping', { api: props.httpApi, domainName: this.domainName, stage: props.stage });

    if (zone) {
      this.aliasRecord = new ARecord(this, 'AliasRecord', {
        zone,
        recordName: domain.domainName,
        target: RecordTarget.fromAlias(
          new ApiGatewayv2DomainProperties(this.domainName.regionalDomainName, this.domainName.regionalHostedZoneId),
        ),
      });
    }
  }
}

/** What is wrong with a domain configuration for a stack in `region`, each problem a sentence naming its field. */
function domainProblems(domain: DomainConfig, region: string): string[] {
  const problems: string[] = [];
  const name = canonicalDnsName(domain.domainName);
  if (!domain.certificateArn && !domain.hostedZone) {
    problems.push(
      `domain.certificateArn and domain.hostedZone are both unset: give an ACM certificate for ${name} in ${region}, ` +
        'or the Route 53 public hosted zone in which the stack requests and validates one.',
    );
  }
  if (domain.certificateArn && !Token.isUnresolved(domain.certificateArn)) {
    const certificateRegion = acmCertificateRegion(domain.certificateArn);
    if (!certificateRegion) {
      problems.push(`domain.certificateArn ${domain.certificateArn} is not an ACM certificate ARN.`);
    } else if (!Token.isUnresolved(region) && certificateRegion !== region) {
      // A regional API Gateway domain uses a certificate of its own region (only edge-optimized ones use us-east-1).
      problems.push(
        `domain.certificateArn is in ${certificateRegion}, but the stage deploys to ${region}: a regional API domain needs a ` +
          `certificate in its own region. Request or import one for ${name} in ${region}.`,
      );
    }
  }
  if (domain.hostedZone) {
    const zoneName = canonicalDnsName(domain.hostedZone.zoneName);
    if (name !== zoneName && !name.endsWith(`.${zoneName}`)) {
      problems.push(
        `domain.domainName ${name} is not inside domain.hostedZone.zoneName ${zoneName}: the alias record could not be added there.`,
      );
    }
  }
  return problems;
}

/** The region of an ACM certificate's ARN; undefined when it is no such ARN. */
function acmCertificateRegion(arn: string): string | undefined {
  try {
    const parts = Arn.split(arn, ArnFormat.SLASH_RESOURCE_NAME);
    return parts.service === 'acm' && parts.resource === 'certificate' && parts.region ? parts.region : undefined;
  } catch {
    return undefined;
  }
}

/** A DNS name as compared: case-insensitive, without the root's trailing dot. */
function canonicalDnsName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
