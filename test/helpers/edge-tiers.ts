// Both tiers as the edge tests (test/edge/*) meet them: listening on loopback, logging at info
// into a sink the test reads, and counting the work done for requests: the front's calls to a
// fake upstream, the post API's reads of a store in memory.
import type { FastifyInstance } from 'fastify'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import type { Post } from '../../src/store/store.js'
import { testConfig } from './config.js'
import { createCountingStore } from './counting-store.js'
import { json, startFakeUpstream, type FakeUpstream, type UpstreamBehaviour } from './fake-upstream.js'
import { logSink, type LogSink } from './log-sink.js'
import { listen, startFront, type FrontTestOptions } from './tiers.js'

/** Posts both tiers serve: the list is well over 1 KiB, so that it is compressed. */
export const EDGE_POSTS: readonly Post[] = Array.from({ length: 20 }, (_, i) => ({ slug: `post-${i}`, title: `Post ${i}`, content: 'x'.repeat(100) }))

/** A slug neither tier has (404 from the upstream, or from the store). */
export const MISSING_SLUG = 'missing'

export interface EdgeTier {
  name: 'front' | 'posts-api'
  app: FastifyInstance
  port: number
  list: string
  /** The path of the post `slug` (any slug the fake data answers, except MISSING_SLUG). */
  item: (slug: string) => string
  /** Whether answers carry CORS headers (the front's default `CORS_ORIGIN=*`). */
  cors: boolean
  /** Work done for requests so far: upstream calls (front), store reads (post API). */
  calls: () => number
  /** The access and refusal lines logged so far (`msg: 'request'`). */
  requestLines: () => LogSink['lines']
  close: () => Promise<void>
}

/** The fake upstream's answers: every slug is a post, but MISSING_SLUG. */
export const upstreamAnswers: UpstreamBehaviour = (req, res) => {
  const url = req.url ?? ''
  if (url === '/api/posts') return json(res, 200, EDGE_POSTS)
  const slug = decodeURIComponent(url.slice('/api/post/'.length))
  if (slug === MISSING_SLUG) return json(res, 404, { title: 'Not found' })
  json(res, 200, { slug })
}

const requestLines = (sink: LogSink) => () => sink.lines.filter((line) => line.msg === 'request')

export async function startEdgeFront (options: FrontTestOptions = {}): Promise<EdgeTier & { upstream: FakeUpstream }> {
  const upstream = await startFakeUpstream(upstreamAnswers)
  const sink = logSink('info')
  const front = await startFront(upstream.url, { logger: sink.logger, ...options })
  return {
    name: 'front',
    app: front.app,
    port: front.port,
    list: '/api/blog',
    item: (slug) => `/api/blog/${slug}`,
    cors: true,
    calls: () => upstream.requests.length,
    requestLines: requestLines(sink),
    upstream,
    close: async () => {
      await front.app.close()
      await upstream.close()
    }
  }
}

export async function startEdgePostsApi (): Promise<EdgeTier> {
  const store = createCountingStore(EDGE_POSTS)
  const sink = logSink('info')
  const posts = await listen(buildPostsApp(postsAppOptions(testConfig(), { store, logger: sink.logger })))
  return {
    name: 'posts-api',
    app: posts.app,
    port: posts.port,
    list: '/api/posts',
    item: (slug) => `/api/post/${slug}`,
    cors: false,
    calls: store.reads,
    requestLines: requestLines(sink),
    close: async () => await posts.app.close()
  }
}
