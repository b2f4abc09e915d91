// `search_snippet`: a short passage of a post's plain text around the words the query asked for,
// HTML-escaped, each matched word in <mark>. Computed here from the parsed query, not by the
// engine, so that it is the same on every store.
import { stemmer } from 'stemmer'
import { WORD_TOKEN, type SearchQuery } from '../contract/search-query.js'

/** The most characters of text a snippet shows (marks, escapes and ellipses aside). */
export const SNIPPET_LENGTH = 200
/** How much text before the first matched word a snippet keeps, when it does not start the text. */
const LEAD = 40
const ELLIPSIS = '…'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string)

/**
 * The form in which a word of the text and a word of the query are compared: case and accents
 * folded (as FTS5 and the usual MySQL collations compare), then, for English, reduced to its
 * Porter stem, the stemmer SQLite uses; PostgreSQL's English stemmer is its successor, so a
 * snippet may rarely mark a word PostgreSQL did not match, or miss one it did.
 */
export function createWordKey (language: string): (word: string) => string {
  const fold = (word: string): string => word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
  return language === 'english' ? (word) => stemmer(fold(word)) : fold
}

interface Match { start: number, end: number, key: string }

/**
 * The snippet of `text` for `query`: the window of at most SNIPPET_LENGTH characters holding the
 * most distinct wanted words (then the most matches, then the earliest), cut at word boundaries,
 * with `…` where text was cut off; the text's start when no wanted word is in it. Every word of a
 * wanted term is marked wherever it appears; excluded terms never are.
 */
export function searchSnippet (text: string, query: SearchQuery, language: string): string {
  const keyOf = createWordKey(language)
  // A post repeats its words: each is folded and stemmed once.
  const keys = new Map<string, string>()
  const key = (word: string): string => {
    let wordKey = keys.get(word)
    if (wordKey === undefined) keys.set(word, wordKey = keyOf(word))
    return wordKey
  }
  const wanted = new Set(query.groups.flat().flatMap((term) => term.tokens.map(key)))
  // Plain text as one line: runs of white space and control characters become one space.
  const plain = text.replace(/[\s\p{Cc}]+/gu, ' ').replace(/\p{Cs}/gu, '\uFFFD').trim()
  const matches: Match[] = []
  for (const { 0: word, index } of plain.matchAll(WORD_TOKEN)) {
    const wordKey = key(word)
    if (wanted.has(wordKey)) matches.push({ start: index, end: index + word.length, key: wordKey })
  }
  const from = windowStart(plain, matches)
  const to = cutEnd(plain, from)
  let html = from > 0 ? ELLIPSIS : ''
  let at = from
  for (const match of matches) {
    if (match.start < from || match.end > to) continue
    html += `${escapeHtml(plain.slice(at, match.start))}<mark>${escapeHtml(plain.slice(match.start, match.end))}</mark>`
    at = match.end
  }
  return html + escapeHtml(plain.slice(at, to)) + (to < plain.length ? ELLIPSIS : '')
}

/** Where the best window starts: a little before its first match, at the start of a word. */
function windowStart (plain: string, matches: Match[]): number {
  if (matches.length === 0) return 0
  let best = { first: 0, distinct: 0, count: 0 }
  const counts = new Map<string, number>()
  let last = 0
  // Slides over the matches: the window starting at match i holds the matches ending within it.
  for (let first = 0; first < matches.length; first++) {
    const start = (matches[first] as Match).start
    for (; last < matches.length && (matches[last] as Match).end - start <= SNIPPET_LENGTH - LEAD; last++) {
      const k = (matches[last] as Match).key
      counts.set(k, (counts.get(k) ?? 0) + 1)
    }
    if (counts.size > best.distinct || (counts.size === best.distinct && last - first > best.count)) {
      best = { first, distinct: counts.size, count: last - first }
    }
    const k = (matches[first] as Match).key
    const left = (counts.get(k) ?? 1) - 1
    if (left === 0) counts.delete(k)
    else counts.set(k, left)
  }
  const start = (matches[best.first] as Match).start
  if (start <= LEAD) return 0
  // Back to the start of a word at most LEAD characters before, or to the match itself.
  const lead = plain.slice(start - LEAD, start)
  const space = lead.indexOf(' ')
  return space === -1 ? start : start - LEAD + space + 1
}

/** Where a window from `from` ends: at most SNIPPET_LENGTH characters on, after a whole word. */
function cutEnd (plain: string, from: number): number {
  const limit = from + SNIPPET_LENGTH
  if (limit >= plain.length) return plain.length
  const space = plain.lastIndexOf(' ', limit)
  if (space > from) return space
  // No space in the window (one long word): cut between two code points.
  const code = plain.charCodeAt(limit - 1)
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit
}
