// The token of a state of the published posts: a digest of its sorted (slug, row version) pairs.
// Derived from the content alone, so every process that sees a state names it alike, whichever
// post API or front a client syncs through, and a restarted process names it as before.
import { createHash } from 'node:crypto'

/** Slug → row version: the published posts of one state, as a post API reads them. */
export type RowVersions = ReadonlyMap<string, string>

// 128 bits: a token nobody was given matches one a process holds with a chance of about
// (tokens held) / 2^128, so a guessed token at worst gets "expired". No secret key: a token
// computed from known slugs and versions names a real state and gets that state's true delta,
// which tells nothing the public list does not.
const TOKEN_BYTES = 16

// Names the digest's layout, so that a future layout can never give an old token a new meaning.
const DOMAIN = 'blog-read-api state 1\n'

/** What a token looks like: 22 base64url characters, safe in a URL, a header and an SSE `id:`. */
export const STATE_TOKEN_PATTERN = /^[\w-]{22}$/

export function isStateToken (value: string): boolean {
  return STATE_TOKEN_PATTERN.test(value)
}

/** The token of `versions`: the same for the same pairs, whatever order they were read in. */
export function stateToken (versions: RowVersions): string {
  const hash = createHash('sha256').update(DOMAIN)
  // Code-unit order, the same in every process; each pair as two JSON strings, which delimit
  // themselves, so no slug or version can pass for another pair.
  for (const slug of [...versions.keys()].sort()) {
    hash.update(`${JSON.stringify(slug)}${JSON.stringify(versions.get(slug))}\n`)
  }
  return hash.digest().subarray(0, TOKEN_BYTES).toString('base64url')
}
