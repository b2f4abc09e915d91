// The slug rule, shared by the front, the upstream and the tests.

export const SLUG_MAX_LENGTH = 200

/** Lower-case ASCII letters and digits in groups joined by single hyphens. Linear: no ReDoS. */
export const DEFAULT_SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/**
 * The front's check, run on the decoded path parameter before anything else.
 * An operator pattern is anchored here, and `.`/`..` are refused whatever it says:
 * percent-encoding keeps dots, and a dot segment in the upstream path would be a traversal.
 */
export function createSlugValidator (pattern: RegExp = DEFAULT_SLUG_PATTERN): (slug: string) => boolean {
  const anchored = anchorSlugPattern(pattern)
  return (slug) => slug.length >= 1 && slug.length <= SLUG_MAX_LENGTH &&
    slug !== '.' && slug !== '..' && anchored.test(slug)
}

/** The slug pattern as the front applies it: anchored, whole string (also its documented pattern). */
export function anchorSlugPattern (pattern: RegExp): RegExp {
  return pattern === DEFAULT_SLUG_PATTERN ? pattern : new RegExp(`^(?:${pattern.source})$`, pattern.flags.replace(/[gy]/g, ''))
}

// C0 controls, DEL, and lone UTF-16 surrogates (which no store can hold as text).
const UNSTORABLE = /[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/ // eslint-disable-line no-control-regex

/**
 * The upstream's lighter check: it serves whatever slugs the table holds (an operator may
 * widen the front's pattern), so it only refuses what no store could have stored or matched.
 */
export function isLookupableSlug (slug: string): boolean {
  return slug.length >= 1 && slug.length <= SLUG_MAX_LENGTH && isStorableText(slug)
}

/** Whether every store can hold and compare `text` (no control characters, no lone surrogates). */
export function isStorableText (text: string): boolean {
  return !UNSTORABLE.test(text)
}
