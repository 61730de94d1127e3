/** Java `Properties` text as the admin tools send it (UPDATE_BROKER_CONFIG, UPDATE_NAMESRV_CONFIG bodies). */

/** Parses Java Properties text (key=value or key:value lines, # and ! comments). */
export function parsePropertiesText(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
    else out.set(line, '');
  }
  return out;
}
