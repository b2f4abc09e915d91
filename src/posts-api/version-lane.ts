// The post API's fast lane (src/http/fast-lane.ts): the version route. A front reads the version
// once per batch of its requests, which makes it this tier's commonest request under load. Below
// the framework, a read costs this tier about 18 µs of CPU less, of about 240 (a bare node:http
// server spends about 130 on such a lone request; docs/decisions.md, "A version read starts as
// soon as the one before it ends"). A failed read is handed to the route with its outcome, which
// answers it with its problem, so the store is never asked twice.
import { POSTS_VERSION_HEADER, VERSION_PATH } from '../contract/posts-version.js'
import type { IncomingMessage } from 'node:http'
import { settle, type Lane } from '../http/fast-lane.js'
import { JSON_CONTENT_TYPE } from '../http/representation.js'

export interface VersionLane {
  lane: Lane
  /** The read the lane handed over with `req` (undefined: it did not take the request). */
  handed: (req: IncomingMessage) => Promise<string | undefined> | undefined
}

/** The body of the version route: the version now, or null when the store cannot tell. */
export function versionBody (version: string | undefined): string {
  return JSON.stringify({ version: version ?? null })
}

/** The headers of the version route's answer, after those of every answer. */
export function versionHeaders (version: string | undefined): string[] {
  const label = version === undefined ? [] : [POSTS_VERSION_HEADER, version]
  return [...label, 'cache-control', 'no-store', 'content-type', JSON_CONTENT_TYPE]
}

/** A lane answering `GET /api/posts/version` (no query) with `readVersion`, read after the request arrived. */
export function createVersionLane (readVersion: () => Promise<string | undefined>): VersionLane {
  const handed = new WeakMap<IncomingMessage, Promise<string | undefined>>()
  return {
    lane (exchange) {
      if (exchange.req.url !== VERSION_PATH) return false
      settle(exchange, readVersion(), handed, (version) => {
        exchange.answer(VERSION_PATH, 200, versionHeaders(version), Buffer.from(versionBody(version)))
        return true
      })
      return true
    },
    handed: (req) => handed.get(req)
  }
}
