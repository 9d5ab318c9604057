/** What the tests read of the README and docs/: prose, headings and their anchors, as GitHub renders them. */

/** The lines outside fenced code blocks: a `#` comment in a bash block is no heading, a `[x](y)` in code no link. */
export function proseLines(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** A document's headings, as their text reads: links reduced to their text. */
export function headingsOf(markdown: string): string[] {
  return proseLines(markdown).flatMap((line) => {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    return heading === undefined ? [] : [heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').trim()];
  });
}

/** The anchors GitHub gives a document's headings: lower-cased, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const heading of headingsOf(markdown)) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    let anchor = slug;
    for (let repeat = 1; anchors.has(anchor); repeat++) anchor = `${slug}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
}

/**
 * The lines under a heading, its code blocks included, up to the next heading of its level or above:
 * where a test finds what one section states.
 */
export function sectionOf(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  let fenced = false;
  let level: number | undefined;
  const section: string[] = [];
  for (const line of lines) {
    if (line.trimStart().startsWith('```')) fenced = !fenced;
    const found = fenced ? null : /^(#{1,6}) (.+)$/.exec(line);
    if (found && level !== undefined && found[1]!.length <= level) break;
    if (level !== undefined) section.push(line);
    if (found && found[2]!.trim() === heading) level = found[1]!.length;
  }
  return section;
}
