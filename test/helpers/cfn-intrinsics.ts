/**
 * Evaluates the intrinsic functions CloudFormation resolves without reading another resource (Ref to
 * a pseudo parameter, Fn::Join, Fn::Select, Fn::Split), as it would at deploy time with these values:
 * what a name built from the stack id becomes for one creation of the stack.
 */
export function evaluateIntrinsics(value: unknown, pseudoParameters: Readonly<Record<string, string>>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => evaluateIntrinsics(item, pseudoParameters));
  const entries = Object.entries(value);
  if (entries.length !== 1) throw new Error(`Not an intrinsic function: ${JSON.stringify(value)}`);
  const [name, args] = entries[0]!;
  const evaluate = (arg: unknown) => evaluateIntrinsics(arg, pseudoParameters);
  switch (name) {
    case 'Ref': {
      const resolved = pseudoParameters[args as string];
      if (resolved === undefined) throw new Error(`No value for Ref ${String(args)}`);
      return resolved;
    }
    case 'Fn::Join': {
      const [delimiter, list] = args as [string, unknown[]];
      return (evaluate(list) as string[]).join(delimiter);
    }
    case 'Fn::Select': {
      const [index, list] = args as [number | string, unknown];
      return (evaluate(list) as unknown[])[Number(index)];
    }
    case 'Fn::Split': {
      const [delimiter, source] = args as [string, unknown];
      return (evaluate(source) as string).split(delimiter);
    }
    default:
      throw new Error(`Intrinsic function ${name} is not evaluated here`);
  }
}
