/** How the bench's tables and progress lines write bytes, times and money. */

export const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
export const ms = (value: number, digits = 1) => value.toFixed(digits);
export const dollars = (value: number) => `$${value.toFixed(3)}`;

/** A line on stderr: stdout holds the tables alone. */
export function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}
