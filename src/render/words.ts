// What a word is, for `word_count` and `reading_time`. One definition, here, so that every store
// and both tiers count alike, and it depends on no locale data: Intl.Segmenter would follow the
// ICU of each Node line, so two processes of one fleet could count one post differently.
//
// A word is either
// - one character of a script written without spaces between words (Han, Hiragana, Katakana,
//   with the marks those scripts share, such as the long-vowel mark `ー`), or
// - a run of other characters between white space and such characters,
// and counts only when it holds a letter or a digit. So `don't`, `C++`, `3.14`, `e-mail` and a
// whole URL are one word each, `—` and `**` none, and `日本語の本` five. Scripts with neither
// spaces nor one word per character (Thai, Lao, Khmer, Burmese) count a whole phrase as one word.

const WORD_CANDIDATE = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]|[^\s\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]+/gu
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u

export function countWords (text: string): number {
  let count = 0
  for (const [candidate] of text.matchAll(WORD_CANDIDATE)) {
    if (LETTER_OR_DIGIT.test(candidate)) count++
  }
  return count
}
