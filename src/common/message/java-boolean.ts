/**
 * Java's `Boolean.parseBoolean(String)`, as Apache RocketMQ reads boolean message properties
 * (`TRAN_MSG`, `WAIT`, …): true exactly when the text is "true" in any case ("TRUE", "True");
 * every other text, and an absent property (`undefined`), is false. Never throws.
 */
export function javaParseBoolean(text: string | undefined | null): boolean {
  return text !== undefined && text !== null && text.length === 4 && text.toLowerCase() === 'true';
}
