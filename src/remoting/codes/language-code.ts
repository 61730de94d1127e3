/**
 * LanguageCode of the remoting header. JSON headers carry the NAME ("JAVA"); ROCKETMQ binary
 * headers carry the one-byte CODE. Values mirror Apache RocketMQ's LanguageCode enum.
 */
export const LanguageCode = {
  JAVA: 0,
  CPP: 1,
  DOTNET: 2,
  PYTHON: 3,
  DELPHI: 4,
  ERLANG: 5,
  RUBY: 6,
  OTHER: 7,
  HTTP: 8,
  GO: 9,
  PHP: 10,
  OMS: 11,
  RUST: 12,
  NODE_JS: 13,
} as const;

export type LanguageName = keyof typeof LanguageCode;

const BY_CODE = new Map<number, string>(Object.entries(LanguageCode).map(([k, v]) => [v, k]));

/** Name for a binary language byte; an unknown byte maps to "OTHER". */
export function languageNameOf(code: number): string {
  return BY_CODE.get(code) ?? 'OTHER';
}

/** Binary byte for a language name; an unknown name maps to OTHER (7). */
export function languageCodeOf(name: string): number {
  return Object.prototype.hasOwnProperty.call(LanguageCode, name)
    ? LanguageCode[name as LanguageName]
    : LanguageCode.OTHER;
}
