// Fitting text to a terminal width without cutting words (pure). Widths count code points; the
// marks this tool prints (✓ ! ✗ · ⠋ █) are one column each.

// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g;

export const visibleLength = (s: string): number => [...s.replace(SGR, '')].length;

/**
 * Word-wraps `text` to `width` columns; continuation lines get `indent` (a hanging indent).
 *
 * A token too long for a continuation line (a command, a path, a JSON flag value) is never broken:
 * a person copies it, and a newline inside a command breaks the paste. It goes on a line of its
 * own starting at column 0, so the terminal's soft-wrap continues it at column 0 too (not under
 * the gutter) and a line selection copies exactly it; a `quoted command` loses its backticks
 * there, which the shell would run as a substitution. The prose goes on below it, indented.
 */
export function wrapWords(text: string, width: number, indent = ''): string[] {
  // Each token keeps the spaces before it, so aligned columns survive on the first line.
  // A `quoted command` is one token: it is never split across lines.
  const tokens = text.match(/ *(?:[^\s`]*`[^`]*`\S*|\S+)/g);
  if (!tokens) return [text];
  const indentLen = visibleLength(indent);
  const room = width - indentLen;
  // [text, bare]: a bare line is an over-long token alone, at column 0.
  const lines: [string, boolean][] = [];
  let cur = '';
  let curLen = 0;
  const flush = () => {
    if (cur !== '') lines.push([cur, false]);
    cur = '';
    curLen = 0;
  };
  for (const t of tokens) {
    const tl = visibleLength(t);
    const word = t.trimStart();
    if (visibleLength(word) > room) {
      // `(` + `command` + `),`: the command alone, the punctuation stays with the prose.
      const q = /^([^\s`]*)`([^`]*)`(\S*)$/.exec(word);
      const [before, bare, after] = q ? [q[1], q[2], q[3]] : ['', word, ''];
      if (before) {
        const lead = lines.length === 0 ? 0 : indentLen;
        if (cur !== '' && lead + curLen + 1 + visibleLength(before) > width) flush();
        cur += cur === '' ? before : ` ${before}`;
      }
      flush();
      lines.push([bare, true]);
      if (after) {
        cur = after;
        curLen = visibleLength(after);
      }
      continue;
    }
    const prefixLen = lines.length === 0 ? 0 : indentLen;
    if (cur === '' || prefixLen + curLen + tl <= width) {
      cur += cur === '' && lines.length > 0 ? word : t;
      curLen = visibleLength(cur);
    } else {
      flush();
      cur = word;
      curLen = visibleLength(word);
    }
  }
  flush();
  return lines.map(([l, bare], i) => (i === 0 || bare ? l : indent + l));
}

// Joins a flag or `export` to its value while wrapping: `--set workers.0.gpuMemoryUtilization=0.3`
// or `export UCX_TLS=...` in a fix's prose is a command too, and a line break between the two
// halves makes the paste run half of it. A control character is one column, like the space it holds.
const GLUE = '\u0001';
const FLAG_AND_VALUE = /(^|\s)(--[\w.-]+|export) (?=[^\s`-])/g;

/** wrapWords for a fix: besides `quoted commands`, a flag (or `export`) stays on one line with its value. */
export function wrapFix(text: string, width: number, indent = ''): string[] {
  const glued = text.replace(FLAG_AND_VALUE, `$1$2${GLUE}`);
  return wrapWords(glued, width, indent).map((l) => l.replaceAll(GLUE, ' '));
}

/** A command inside a wrapFix text that stays on one line, like a `quoted command` but shown without backticks. */
export const keepWhole = (command: string): string => command.replaceAll(' ', GLUE);

/** Wraps each line of a block (already indented lines keep their indent as the hanging indent). */
export function wrapBlock(text: string, width: number, extraIndent = '  '): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const lead = /^ */.exec(line.replace(SGR, ''))![0];
    if (visibleLength(line) <= width || line.trim() === '') {
      out.push(line);
      continue;
    }
    out.push(...wrapWords(line, width, lead + extraIndent));
  }
  return out.join('\n');
}

/** Cuts to `width` columns at a word boundary, with an ellipsis; whole when it fits. */
export function truncateWords(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  if (width <= 1) return width === 1 ? '…' : '';
  const chars = [...text];
  let cut = chars.slice(0, width - 1).join('');
  const space = cut.lastIndexOf(' ');
  // A word boundary unless that would throw away most of the room (one long token: a path).
  if (chars[width - 1] !== ' ' && space >= Math.floor((width - 1) / 2)) cut = cut.slice(0, space);
  return `${cut.trimEnd()}…`;
}

/** The whole words of `text` that fit in `width` (with an ellipsis when some are left out): never a cut word. */
export function wholeWords(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  const words = text.split(' ');
  let out = '';
  for (const w of words) {
    const next = out === '' ? w : `${out} ${w}`;
    if (visibleLength(next) + 1 > width) break;
    out = next;
  }
  return `${out}…`;
}

/**
 * `parts` joined by `sep`, wrapped at the separators first: each part stays whole on a line when it
 * fits there (`Intel Xeon® Processor (2 cores)` is not split from its count); a part longer than a
 * line wraps at its own word boundaries. Continuation lines get `indent`.
 */
export function wrapParts(parts: string[], sep: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  // The line being filled, its indent included; null before the first part of a line.
  let cur: string | null = null;
  const lead = () => (lines.length === 0 ? '' : indent);
  for (const part of parts) {
    if (cur !== null && visibleLength(cur + sep + part) <= width) {
      cur += sep + part;
      continue;
    }
    if (cur !== null) lines.push(cur);
    cur = lead() + part;
    if (visibleLength(cur) <= width) continue;
    // One part alone is too long: its words wrap; its last line takes the parts that follow.
    const wrapped = wrapWords(cur, width, indent);
    lines.push(...wrapped.slice(0, -1));
    cur = wrapped[wrapped.length - 1];
  }
  if (cur !== null) lines.push(cur);
  return lines;
}
