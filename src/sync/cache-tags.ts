// What a CDN purges when posts change: the cache tags every answer names (in the headers
// CACHE_TAG_HEADERS lists: cache-tag-headers.ts) and the front paths that answer them.
import type { Change } from './change.js'

/** Every list, feed and sitemap depends on this tag, so any change purges them all. */
export const POSTS_TAG = 'posts'

// Percent-encoded (a tag holding a space or a comma stays one key in a header that separates
// keys with them); a lone surrogate, which cannot be encoded, becomes U+FFFD first.
const encodePart = (text: string): string => encodeURIComponent((text as string & { toWellFormed: () => string }).toWellFormed())

/** The tag of one post's answers. */
export const postTag = (slug: string): string => `post-${encodePart(slug)}`

/** The tag of answers filtered by the tag `tag`. */
export const tagTag = (tag: string): string => `tag-${encodePart(tag)}`

/**
 * The tags `change` makes stale: `posts` (so every list, tag-filtered or not, and every feed)
 * and each changed or removed post's own. Tag filters need no tag of their own here: `posts`
 * covers them, and a change does not say which tags a post had before.
 */
export function changeCacheTags (change: Change): string[] {
  return [POSTS_TAG, ...[...change.upserted, ...change.deleted].sort().map(postTag)]
}

/** The front's routes whose answers depend on every post. */
export const LIST_PATHS = ['/api/blog', '/api/tags', '/feed.xml', '/feed.atom', '/feed.json', '/sitemap.xml'] as const

/** The front paths to purge for `change`, for CDNs that purge by URL: the lists and feeds, and each post's page. */
export function changePaths (change: Change): string[] {
  return [...LIST_PATHS, ...[...change.upserted, ...change.deleted].sort().map((slug) => `/api/blog/${encodeURIComponent(slug)}`)]
}

/**
 * `tags` as the value of the header `name`: Cloudflare's `Cache-Tag` and Akamai's
 * `Edge-Cache-Tag` separate them with commas, `Surrogate-Key` (Fastly), `xkey` (Varnish) and any
 * other name with spaces.
 */
export function tagHeaderValue (name: string, tags: readonly string[]): string {
  return tags.join(/^(?:edge-)?cache-tag$/i.test(name) ? ',' : ' ')
}
