// The grammar of `q`, our own and small, so that no input ever reaches an engine's query syntax:
// words, "quoted phrases", -excluded words and -"excluded phrases", and OR between terms.
// Adjacent terms must all match (AND); OR binds tighter than adjacency, so `a OR b c` means
// (a OR b) AND c. Every other character is part of a word.
import { ProblemError } from './problems.js'

/** The longest `q`, in characters (code points). */
export const MAX_QUERY_LENGTH = 500
/** The most terms (words and phrases, excluded ones included) one `q` may hold. */
export const MAX_TERMS = 32

const invalidQuery = (detail: string): ProblemError => new ProblemError('invalid-query', detail)

export const SEARCH_QUERY_DETAILS = {
  length: `The q parameter must be at most ${MAX_QUERY_LENGTH} characters long.`,
  terms: `The q parameter may hold at most ${MAX_TERMS} words and quoted phrases.`,
  empty: 'The q parameter must hold at least one word to search for (letters or digits) that is not excluded.'
} as const

/**
 * A searchable unit of text: a letter or digit, then letters, digits and combining marks. Terms
 * with none are ignored; snippets match on these.
 */
export const WORD_TOKEN = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu

/** Characters no engine should see: controls (NUL ends an FTS5 string, PostgreSQL refuses it), format, unpaired surrogates, private use, unassigned. */
const UNSEARCHABLE = /\p{C}/gu

export interface SearchTerm {
  /**
   * The term's text as written, each unsearchable character (control, format, unpaired
   * surrogate) replaced by a space, trimmed: what an engine's own text parser may read (as a parameter
   * or inside a quoted FTS5 string, never as its query syntax).
   */
  readonly text: string
  /** Its tokens (WORD_TOKEN), in order: never empty. Several tokens match as a phrase. */
  readonly tokens: readonly string[]
  /** Whether it was written in quotes. */
  readonly quoted: boolean
}

/**
 * A parsed `q`: a post matches when, for every group, at least one of its terms matches, and
 * none of the excluded terms matches. There is always at least one group.
 */
export interface SearchQuery {
  readonly groups: ReadonlyArray<readonly SearchTerm[]>
  readonly excluded: readonly SearchTerm[]
}

type Item = { kind: 'or' } | { kind: 'term', term: SearchTerm, excluded: boolean }

const SPACE = /\s/u

/**
 * Parses `q`. Throws the `invalid-query` problem when it is too long, holds too many terms, or
 * has nothing to search for (empty, only punctuation, only exclusions): no engine can answer
 * "everything except" from its index, and an answer of no posts would hide the client's mistake.
 */
export function parseSearchQuery (q: string): SearchQuery {
  // length counts UTF-16 units, at least the code points: the cheap bound first.
  if (q.length > MAX_QUERY_LENGTH && [...q].length > MAX_QUERY_LENGTH) throw invalidQuery(SEARCH_QUERY_DETAILS.length)
  const items = scan(q)
  if (items.filter((item) => item.kind === 'term').length > MAX_TERMS) throw invalidQuery(SEARCH_QUERY_DETAILS.terms)
  const query = assemble(items)
  if (query.groups.length === 0) throw invalidQuery(SEARCH_QUERY_DETAILS.empty)
  return query
}

/** Terms and standalone ORs, in order; terms without a token are left out, as if absent. */
function scan (q: string): Item[] {
  const items: Item[] = []
  let i = 0
  while (i < q.length) {
    if (SPACE.test(q[i] as string)) {
      i++
      continue
    }
    // A leading minus excludes what follows it, unless nothing does (then it is a word of its own).
    const excluded = q[i] === '-' && i + 1 < q.length && !SPACE.test(q[i + 1] as string)
    if (excluded) i++
    let raw: string
    const quoted = q[i] === '"'
    if (quoted) {
      // A phrase runs to the next quote, or to the end when it is not closed.
      const close = q.indexOf('"', i + 1)
      const end = close === -1 ? q.length : close
      raw = q.slice(i + 1, end)
      i = end + 1
    } else {
      // A word ends at white space or at a quote, which opens a phrase.
      let end = i
      while (end < q.length && q[end] !== '"' && !SPACE.test(q[end] as string)) end++
      raw = q.slice(i, end)
      i = end
    }
    if (!quoted && !excluded && raw === 'OR') {
      items.push({ kind: 'or' })
      continue
    }
    const text = raw.replace(UNSEARCHABLE, ' ').trim()
    const tokens = text.match(WORD_TOKEN)
    if (tokens !== null) items.push({ kind: 'term', term: { text, tokens, quoted }, excluded })
  }
  return items
}

/**
 * Groups terms joined by OR. An OR without a term to join on either side (at the start or end,
 * next to another OR, or next to an excluded term) is ignored.
 */
function assemble (items: Item[]): SearchQuery {
  const groups: SearchTerm[][] = []
  const excluded: SearchTerm[] = []
  // Whether the last item was an OR that follows a group's term: the next term joins that group.
  let joining = false
  let previous: Item | undefined
  for (const item of items) {
    if (item.kind === 'or') {
      // Repeated ORs count as one.
      joining = (previous?.kind === 'term' && !previous.excluded) || (previous?.kind === 'or' && joining)
    } else if (item.excluded) {
      excluded.push(item.term)
      joining = false
    } else {
      const last = groups.at(-1)
      if (joining && last !== undefined) last.push(item.term)
      else groups.push([item.term])
      joining = false
    }
    previous = item
  }
  return { groups, excluded }
}
