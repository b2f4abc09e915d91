// The headers (CACHE_TAG_HEADERS) in which an answer names its cache tags (cache-tags.ts), made
// once per held representation: a copy served again costs a lookup, not an encoding. With no
// header configured, the tiers hold no CacheTagHeaders at all, and an answer costs nothing.
import type { ListFilter } from '../contract/list-filter.js'
import { POSTS_TAG, postTag, tagHeaderValue, tagTag } from './cache-tags.js'

/** Header name → value, set on a reply as they are. */
export type TagHeaders = Readonly<Record<string, string>>

/** Names and values one after the other, the names lower-cased as the framework sends them (for answers written below it). */
export type TagHeaderList = readonly string[]

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
  /** `headers`, one of the objects above, as a list: made once per object. */
  listOf: (headers: TagHeaders) => TagHeaderList
  /**
   * The headers of the 404 of `slug` as a list, made for each answer: a 404 has no held object to
   * keep them with, and an object made only to be listed would cost more than the list.
   */
  postHeaderList: (slug: string) => TagHeaderList
}

/** The headers of `names`; undefined when there are none, so that callers skip them at no cost. */
export function createCacheTagHeaders (names: readonly string[]): CacheTagHeaders | undefined {
  if (names.length === 0) return undefined
  const headersOf = (tags: readonly string[]): TagHeaders =>
    Object.fromEntries(names.map((name) => [name, tagHeaderValue(name, tags)]))
  const posts = headersOf([POSTS_TAG])
  const lowerCased = names.map((name) => name.toLowerCase())
  const lists = new WeakMap<TagHeaders, TagHeaderList>()
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
    listOf (headers) {
      let list = lists.get(headers)
      // Every object above has one value per name of `names`.
      if (list === undefined) lists.set(headers, list = names.flatMap((name, i) => [lowerCased[i] as string, headers[name] as string]))
      return list
    },
    postHeaderList (slug) {
      const tags = [postTag(slug)]
      const list: string[] = []
      names.forEach((name, i) => list.push(lowerCased[i] as string, tagHeaderValue(name, tags)))
      return list
    }
  }
}
