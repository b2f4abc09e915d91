// The feeds in the front's fast lane (src/http/fast-lane.ts): `/feed.xml`, `/feed.atom` and
// `/feed.json` (with `tag=`) made from a list whose copy is held and current, answered below the
// framework like the held lists they are made from. Every other outcome (SITE_URL unset, a
// parameter the route refuses, a list served stale, relayed as a stream or empty, an error) is
// handed to the route of feed-routes.ts together with the list's outcome, so that nothing is
// asked upstream twice.
import type { IncomingMessage } from 'node:http'
import type { FeedSettings } from '../config.js'
import type { ListQuery } from '../contract/list-query.js'
import { settle, type Lane } from '../http/fast-lane.js'
import type { CacheTagHeaders } from '../sync/cache-tag-headers.js'
import type { ListOutcome, UpstreamCache } from './cache/upstream-cache.js'
import { feedContentType, isFeedPath, listRowsOf, type FeedDocuments } from './feed-documents.js'

export interface FeedLaneOptions {
  cache: UpstreamCache
  feeds: FeedSettings
  documents: FeedDocuments
  tagHeaders: CacheTagHeaders | undefined
  /** `Cache-Control` of an answer sent now. */
  cacheControlNow: () => string
}

export interface FeedLane {
  lane: Lane
  /** What the lane got for the list of a feed it handed over (undefined: it did not take the request). */
  handedList: (req: IncomingMessage) => Promise<ListOutcome> | undefined
}

export function createFeedLane ({ cache, feeds, documents, tagHeaders, cacheControlNow }: FeedLaneOptions): FeedLane {
  const lists = new WeakMap<IncomingMessage, Promise<ListOutcome>>()
  return {
    lane (exchange) {
      const url = exchange.req.url as string
      if (!url.startsWith('/feed.')) return false
      const queryAt = url.indexOf('?')
      const path = queryAt === -1 ? url : url.slice(0, queryAt)
      const site = feeds.site
      if (!isFeedPath(path) || site === undefined) return false
      let query: ListQuery
      try {
        query = documents.feedQuery(url)
      } catch {
        // Refused by the route, with its problem.
        return false
      }
      settle(exchange, cache.list(query, exchange.id, () => exchange.answerable()), lists, (outcome) => {
        if (outcome.kind !== 'body' || outcome.stale !== undefined || outcome.body.empty) return false
        const { body, etag } = outcome.body.representation
        const representation = documents.feed(site, path, query, listRowsOf(body, etag))
        const headers = tagHeaders === undefined ? [] : tagHeaders.listOf(tagHeaders.list(query, representation))
        return exchange.representation(path, representation, cacheControlNow(), headers, feedContentType(path))
      })
      return true
    },
    handedList: (req) => lists.get(req)
  }
}
