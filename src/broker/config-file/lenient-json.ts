/**
 * JSON reader that also accepts fastjson's output for Java maps with non-string keys, e.g.
 * `{"offsetTable":{"T@G":{0:12,1:7}}}` (Apache writes integer map keys unquoted, spec §3.9).
 * Bare keys in object-key position are quoted before handing the text to `JSON.parse`;
 * everything inside strings is left untouched. Anything else that is not JSON still throws.
 */

/** Parses standard JSON or fastjson with bare object keys. @throws SyntaxError on other input. */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return JSON.parse(quoteBareKeys(text));
  }
}

/** Returns `text` with every unquoted object key (`{0:1}`) wrapped in double quotes. */
export function quoteBareKeys(text: string): string {
  const out: string[] = [];
  const stack: Array<'{' | '['> = [];
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const end = endOfString(text, i);
      out.push(text.slice(i, end));
      i = end;
      expectKey = false;
      continue;
    }
    if (c === '{' || c === '[') {
      stack.push(c);
      expectKey = c === '{';
      out.push(c);
      i++;
      continue;
    }
    if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
      out.push(c);
      i++;
      continue;
    }
    if (c === ',') {
      expectKey = stack[stack.length - 1] === '{';
      out.push(c);
      i++;
      continue;
    }
    if (expectKey && !/\s/.test(c)) {
      const colon = text.indexOf(':', i);
      if (colon < 0) {
        out.push(text.slice(i));
        break;
      }
      out.push(JSON.stringify(text.slice(i, colon).trim()));
      i = colon;
      expectKey = false;
      continue;
    }
    out.push(c);
    i++;
  }
  return out.join('');
}

/** Index just past the closing quote of the string starting at `start`. */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  return text.length;
}
