// The front's sync route, `GET /api/changes`: the post API's `/api/posts/changes` relayed (never
// cached: a delta is asked once per client and state). Its live stream is the front's own hub,
// fed by ONE upstream stream however many clients follow it (src/sync/stream-relay.ts), opened
// with the first subscriber, closed with the last, and resumed from the hub's head on another
// upstream when it breaks.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import { CHANGES_PATH, POSTS_CHANGES_PATH, canonicalChangesSearch, parseChangesQuery } from '../sync/changes-query.js'
import { ProblemError } from '../contract/problems.js'
import { sendProblem } from '../http/app.js'
import { JSON_CONTENT_TYPE } from '../http/representation.js'
import { createChangeHub, type ChangeHub } from '../sync/change-hub.js'
import { openEventStream, resumeFrom, wantsEventStream } from '../sync/event-stream.js'
import { SYNC_EXPIRED_DETAIL } from '../sync/sse-frame.js'
import { startRelay, type Relay } from '../sync/stream-relay.js'
import type { Timers } from '../lib/timers.js'
import type { UpstreamClient } from './upstream/client.js'

export interface ChangesRelayOptions {
  upstream: UpstreamClient
  logger: Logger
  /** The largest answer relayed (the whole list's limit), and past which it is streamed. */
  maxBytes: number
  streamAbove: number
  schema: object
  /** Heartbeats and the upstream stream's retries (tests). */
  timers?: Timers
}

/** The upstream's detail of a 400, when it is a problem document saying one. */
function detailOf (body: Buffer): string {
  try {
    const { detail } = JSON.parse(body.toString('utf8')) as { detail?: unknown }
    if (typeof detail === 'string') return detail
  } catch {}
  return 'The upstream post API refused these parameters.'
}

export function registerChangesRelay (api: FastifyInstance, { upstream, logger, maxBytes, streamAbove, schema, timers }: ChangesRelayOptions): ChangeHub {
  let relay: Relay | undefined
  const { openStream } = upstream
  const hub = createChangeHub({
    timers,
    onActiveChange (active) {
      if (!active) {
        relay?.close()
        relay = undefined
      } else if (openStream !== undefined && relay === undefined) {
        relay = startRelay({
          hub,
          timers,
          connect: async (lastEventId, signal) => await openStream(POSTS_CHANGES_PATH, lastEventId, signal),
          onError: (err) => logger.warn({ err }, 'the upstream change stream failed; resuming it')
        })
      }
    }
  })
  api.addHook('preClose', (done) => {
    relay?.close()
    hub.close()
    done()
  })

  async function changes (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = parseChangesQuery(request.url)
    if (wantsEventStream(request.headers.accept)) {
      reply.hijack()
      const headers = Object.fromEntries(Object.entries(reply.getHeaders()).map(([name, value]) => [name, String(value)]))
      openEventStream(reply.raw, hub, { from: resumeFrom(request.headers['last-event-id'], query.since), headers })
      return reply
    }
    const response = await upstream.get(POSTS_CHANGES_PATH + canonicalChangesSearch(query), { requestId: request.id, maxBytes, streamAbove })
    switch (response.status) {
      case 200:
        return await reply.header('cache-control', 'no-store').header('content-type', JSON_CONTENT_TYPE).send(response.stream ?? response.body)
      case 410: return sendProblem(reply, 'sync-expired', SYNC_EXPIRED_DETAIL)
      case 400: return sendProblem(reply, 'invalid-query', detailOf(response.body))
      case 503: throw new ProblemError('upstream-unavailable', 'The upstream post API is unavailable; try again shortly.', { retryAfter: 1 })
      default:
        response.stream?.destroy()
        throw new ProblemError('upstream-bad-response', `The upstream post API answered with status ${response.status}.`)
    }
  }

  api.get(CHANGES_PATH, { schema }, changes)
  return hub
}
