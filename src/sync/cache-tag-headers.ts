// The headers (CACHE_TAG_HEADERS) in which an answer names its cache tags (cache-tags.ts), made
// once per held representation: a copy served again costs a lookup, not an encoding. With no
// header configured, the tiers hold no CacheTagHeaders at all, and an answer costs nothing.
import type { ListFilter } from '../contract/list-filter.js'
import { POSTS_TAG, postTag, tagHeaderValue, tagTag } from './cache-tags.js'

/** Header name → value, set on a reply as they are. */
export type TagHeaders = Readonly<Record<string, string>>

/**
 * Bytes of one header's value at most: a tag filter's keys beyond it are left out (`posts`
 * still covers the answer). The post API's answer must stay within the 16 KiB of headers the
 * front's HTTP client, like most proxies and CDNs, accepts, whatever the query names.
 */
export const MAX_TAG_HEADER_BYTES = 2048

export interface CacheTagHeaders {
  /** Every list, feed and sitemap without a tag filter, and the tag counts: `posts`. */
  readonly posts: TagHeaders
  /** A list or feed filtered by `filter` (kept per `held`, the representation served, when given). */
  list: (filter: ListFilter, held?: object) => TagHeaders
  /** The 404 of a slug, or a preview's answer (kept per `held` when given). */
  post: (slug: string, held?: object) => TagHeaders
  /** A post's answer: its own key, and `posts`, since its neighbour links follow the list order (kept per `held`). */
  servedPost: (slug: string, held: object) => TagHeaders
  /**
   * `post(slug)` as names and values one after the other, the names lower-cased (as Node's
   * `writeHead` takes them): the 404 of a slug, made for each answer without an object to key it by.
   */
  postList: (slug: string) => readonly string[]
}

/** The headers of `names`; undefined when there are none, so that callers skip them at no cost. */
export function createCacheTagHeaders (names: readonly string[]): CacheTagHeaders | undefined {
  if (names.length === 0) return undefined
  const headersOf = (tags: readonly string[]): TagHeaders =>
    Object.fromEntries(names.map((name) => [name, tagHeaderValue(name, tags)]))
  const posts = headersOf([POSTS_TAG])
  const lowerCased = names.map((name) => name.toLowerCase())
  // Keyed by the held object: made on its first answer, dropped with it.
  const kept = new WeakMap<object, TagHeaders>()
  const keptOr = (held: object | undefined, make: () => TagHeaders): TagHeaders => {
    if (held === undefined) return make()
    let headers = kept.get(held)
    if (headers === undefined) {
      headers = make()
      kept.set(held, headers)
    }
    return headers
  }

  function listHeaders ({ tag = [], tagAll = [], tagNot = [] }: ListFilter): TagHeaders {
    const named = [...new Set([...tag, ...tagAll, ...tagNot])]
    if (named.length === 0) return posts
    const tags = [POSTS_TAG]
    // Separators (one byte each) and keys, while they fit.
    let bytes = POSTS_TAG.length
    for (const key of named.sort().map(tagTag)) {
      if (bytes + 1 + key.length > MAX_TAG_HEADER_BYTES) break
      bytes += 1 + key.length
      tags.push(key)
    }
    return headersOf(tags)
  }

  return {
    posts,
    list: (filter, held) => filter.tag === undefined && filter.tagAll === undefined && filter.tagNot === undefined ? posts : keptOr(held, () => listHeaders(filter)),
    post: (slug, held) => keptOr(held, () => headersOf([postTag(slug)])),
    servedPost: (slug, held) => keptOr(held, () => headersOf([postTag(slug), POSTS_TAG])),
    postList (slug) {
      // One tag: every header's value is that tag, whatever its separator.
      const tag = postTag(slug)
      const list: string[] = []
      for (const name of lowerCased) list.push(name, tag)
      return list
    }
  }
}
