// A JavaScript string may hold a lone UTF-16 surrogate (half of a pair); that is not Unicode
// text, and PostgreSQL refuses it (jsonb: 22P02; text gets it silently replaced on the way in).
// Both stores check for it here, before any write, so they behave the same.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Whether `text` holds a lone surrogate (is not well-formed Unicode). */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** `text` with every lone surrogate replaced by U+FFFD, as a UTF-8 encoder would write it. */
export function toWellFormed(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD');
}

/** The first `length` code units of `text`, one fewer when the cut would split a surrogate pair. */
export function truncateText(text: string, length: number): string {
  if (text.length <= length) return text;
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}
