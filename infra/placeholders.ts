/**
 * The example values the committed stages carry until an operator fills in their own
 * (docs/operations.md, "2. Fill in the stages (once)"): synthesis accepts them only for a placeholder account,
 * and nothing published names them as if they answered.
 */

/** The documented placeholder accounts of the committed stages: no real account has these ids. */
export const PLACEHOLDER_ACCOUNTS: readonly string[] = ['111111111111', '222222222222'];

/** Whether `account` is one of the documented placeholder accounts. */
export function isPlaceholderAccount(account: string): boolean {
  return PLACEHOLDER_ACCOUNTS.includes(account);
}

/** RFC 2606's names reserved for documentation, and RFC 6761's that never resolve. */
const RESERVED_DOMAIN = /(^|\.)(example|invalid|test|localhost|example\.(com|net|org))\.?$/i;

/** Whether `domain` (a host or an e-mail address's domain) is reserved for examples and can never be reached. */
export function isExampleDomain(domain: string): boolean {
  return RESERVED_DOMAIN.test(domain);
}

/** Whether `email` is at an example domain, so nobody would ever read it. */
export function isExampleEmail(email: string): boolean {
  return isExampleDomain(email.slice(email.lastIndexOf('@') + 1));
}

/** Whether `hostedZoneId` is the documentation's made-up zone id rather than one Route 53 issued. */
export function isExampleZoneId(hostedZoneId: string): boolean {
  return /EXAMPLE/i.test(hostedZoneId);
}
