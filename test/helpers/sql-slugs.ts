// Slugs that look like SQL, for fuzzing the upstream's `/api/post/:slug` on every store:
// quotes, comments, LIKE wildcards, backslashes, tautologies and Unicode, mixed with slugs that
// exist, their case variants and trailing spaces.
import fc from 'fast-check'

/** Rows every store's default table holds side by side (its unique index allows them all). */
export const STORED_SLUGS: readonly string[] = [
  'first-post', 'First-Post', 'cafe', 'café', "it's", '100%', 'snake_case', 'emoji-😀', 'a;b', 'x--y'
]

/**
 * Rows only some stores can hold next to the ones above: MySQL/MariaDB `utf8mb4_bin` is
 * PAD SPACE, so its unique index sees `first-post ` as a duplicate of `first-post`.
 */
export const STORED_WHERE_ALLOWED: readonly string[] = ['first-post ']

/** A standard SQL string literal (no backslashes in the stored slugs: MySQL would read them as escapes). */
export const sqlString = (value: string): string => `'${value.replaceAll("'", "''")}'`

const existing = fc.constantFrom(...STORED_SLUGS, ...STORED_WHERE_ALLOWED)

const fragment = fc.constantFrom(
  "'", "''", '"', '`', '--', '-- ', '#', ';', '%', '_', '%%', '\\', '\\\\', "\\'", '\\%', '\\_',
  ' OR 1=1', "' OR '1'='1", "' OR 1=1 --", '" OR ""="', '/*', '*/', ' UNION SELECT * FROM posts --',
  "'; DROP TABLE posts; --", '$1', '?', ':slug', 'NULL', ' ', '  ', '\u00a0', '\u3000', '\ufeff',
  'é', 'e\u0301', 'É', 'ß', 'ss', '\u0130', '\u212a', '😀', '\u0000', '\t', '%00', 'a'.repeat(201)
)

/** Flips the case of some letters, chosen by the bits of `bits`. */
const flipCase = (slug: string, bits: number): string =>
  [...slug].map((ch, i) => ((bits >>> (i % 31)) & 1) === 1 ? (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()) : ch).join('')

export const sqlLookingSlug: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: existing },
  { weight: 2, arbitrary: fc.tuple(existing, fc.nat()).map(([slug, bits]) => flipCase(slug, bits)) },
  { weight: 2, arbitrary: fc.tuple(existing, fc.constantFrom(' ', '  ', '\u00a0', '%', '_', "'", ' --')).map(([slug, tail]) => slug + tail) },
  { weight: 5, arbitrary: fc.array(fc.oneof(existing, fragment), { minLength: 1, maxLength: 5 }).map((parts) => parts.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) }
)
