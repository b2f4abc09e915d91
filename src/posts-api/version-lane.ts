// The post API's fast lane (src/http/fast-lane.ts): the version route, read once per batch of a
// front's requests and so the post API's commonest request under load. Through the framework, a
// version read cost this tier about 250 µs of CPU on a 2-core virtual machine, most of it
// Fastify's request, reply and child logger around a read of a few µs (docs/performance.md,
// "The post API's version reads"). A failed read is handed to the route with its outcome, which
// answers it with its problem, so the store is never asked twice.
import { POSTS_VERSION_HEADER, VERSION_PATH } from '../contract/posts-version.js'
import type { IncomingMessage } from 'node:http'
import type { Lane } from '../http/fast-lane.js'
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
      const pending = readVersion()
      exchange.untilAnswered()
      pending.then((version) => {
        if (exchange.answerable()) exchange.answer(VERSION_PATH, 200, versionHeaders(version), Buffer.from(versionBody(version)))
      }, () => {
        handed.set(exchange.req, pending)
        exchange.handOver()
      }).catch(() => {
        // A defect while answering: the framework answers, unless the answer had begun.
        if (exchange.res.headersSent) exchange.res.destroy()
        else exchange.handOver()
      })
      return true
    },
    handed: (req) => handed.get(req)
  }
}
