// The fields computed from a post rather than stored: `word_count`, `reading_time` and `excerpt`.
import { countWords } from './words.js'

/** Words read in a minute, the figure Medium popularised. */
export const WORDS_PER_MINUTE = 275
/** Characters of text an excerpt holds at most, before its ellipsis. */
export const EXCERPT_LENGTH = 200
const ELLIPSIS = '…'

export interface ComputedFields {
  word_count: number
  reading_time: number
  excerpt: string
}

/** Minutes to read `wordCount` words: rounded up, and at least 1 (even for an empty post). */
export function readingTime (wordCount: number): number {
  return Math.max(1, Math.ceil(wordCount / WORDS_PER_MINUTE))
}

/**
 * The post's `summary` when it has one that is not blank (as stored); otherwise the start of its
 * text, its white space collapsed to single spaces, cut at a word boundary (see below) so that at
 * most 200 characters (Unicode code points) remain, followed by `…` when something was cut. So
 * the excerpt is at most 201 characters, and the ellipsis tells a reader that the post goes on.
 */
export function excerpt (text: string, summary?: unknown): string {
  if (typeof summary === 'string' && summary.trim() !== '') return summary
  const chars = leadingChars(text, EXCERPT_LENGTH + 1)
  if (chars.length <= EXCERPT_LENGTH) return chars.join('')
  return chars.slice(0, cutIndex(chars)).join('').trimEnd() + ELLIPSIS
}

export function computeFields (text: string, summary?: unknown, wordCount = countWords(text)): ComputedFields {
  return { word_count: wordCount, reading_time: readingTime(wordCount), excerpt: excerpt(text, summary) }
}

/** The first `limit` code points of `text` with its white space collapsed and trimmed (read lazily: a post may be long). */
function leadingChars (text: string, limit: number): string[] {
  const chars: string[] = []
  for (const [word] of text.matchAll(/\S+/gu)) {
    if (chars.length > 0) chars.push(' ')
    for (const char of word) {
      if (chars.length === limit) return chars
      chars.push(char)
    }
    if (chars.length === limit) return chars
  }
  return chars
}

const SPACE = /^\s$/u
const NO_SPACE_SCRIPT = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]/u
// A mark, a variation selector or a zero-width joiner belongs to the character before it.
const CLINGS = /[\p{M}\u200d]/u

/**
 * Where to cut `chars` (of which there are more than EXCERPT_LENGTH): the last word boundary at or
 * before EXCERPT_LENGTH. A boundary is a space, or the edge of a character of a script written
 * without spaces (where each character is a word, see words.ts). With none (one word longer than
 * the excerpt, such as a long URL), the cut falls at EXCERPT_LENGTH itself, moved back off any
 * mark or joiner so that no character is split from its accents.
 */
function cutIndex (chars: readonly string[]): number {
  for (let index = EXCERPT_LENGTH; index > 0; index--) {
    const before = chars[index - 1]!
    const after = chars[index]!
    if (SPACE.test(after)) return index
    if ((NO_SPACE_SCRIPT.test(before) || NO_SPACE_SCRIPT.test(after)) && !CLINGS.test(after) && before !== '\u200d') return index
  }
  let index = EXCERPT_LENGTH
  while (index > 1 && (CLINGS.test(chars[index]!) || chars[index - 1] === '\u200d')) index--
  return index
}
