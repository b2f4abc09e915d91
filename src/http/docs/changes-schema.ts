// The sync route as a schema, for both tiers' OpenAPI documents: the front's `GET /api/changes`
// relays the post API's `GET /api/posts/changes`, so they document one shape.
import { problemResponses, type ProblemResponseOptions } from './problem-schema.js'
import { FIELDS, FORMATS, headerSchemas, JSON_MEDIA_TYPE, POST_REF } from './route-schemas.js'
import type { ProblemKind } from '../../contract/problems.js'
import { STATE_TOKEN_PATTERN } from '../../sync/state-token.js'
import { EVENT_STREAM_TYPE } from '../../sync/sse-frame.js'

const TOKEN = {
  type: 'string',
  pattern: STATE_TOKEN_PATTERN.source,
  description: 'A state of the posts, opaque: the same from every post API process and front that saw that state.'
} as const

const SLUGS = { type: 'array', items: { type: 'string' }, description: 'Slugs, sorted bytewise.' } as const

const CHANGES_BODY = {
  type: 'object',
  required: ['until', 'upserted', 'deleted'],
  properties: {
    since: { ...TOKEN, description: 'The token asked for (absent without `since`).' },
    until: { ...TOKEN, description: 'The state this answer leads to: the `since` of the next request.' },
    upserted: { type: 'array', items: POST_REF, description: 'Posts added or changed since `since` (every post without it), as the detail route serves them with `fields` and `formats`.' },
    deleted: { ...SLUGS, description: 'Slugs of posts removed (or hidden) since `since`; empty without it.' }
  },
  additionalProperties: false
} as const

/** The route's schema; `failures`: the problems of the tier beyond `invalid-query` and `sync-expired`. */
export function changesRouteSchema (failures: readonly ProblemKind[], options: ProblemResponseOptions = {}): object {
  return {
    operationId: 'getChanges',
    summary: 'What changed since a state of the posts, or a live stream of changes',
    description: 'Without `since`: every post, and the token of the state they make up (`until`). With `since`: the posts added or changed ' +
      'since that state (`upserted`) and the slugs removed (`deleted`); applying each answer to a copy gives exactly the current list. ' +
      'A token this server does not hold (too old, or from before a restart) is a 410 `sync-expired`: start again without `since`. ' +
      `With \`Accept: ${EVENT_STREAM_TYPE}\`: a server-sent event per change (\`id:\` its token, \`data:\` ` +
      '`{"since","until","upserted":[slugs],"deleted":[slugs]}`), a heartbeat comment every 15 s, resuming from `Last-Event-ID` ' +
      '(or `since`) with the gap as one event, or an event `sync-expired`. Never cached.',
    tags: ['sync'],
    querystring: {
      type: 'object',
      properties: {
        since: { ...TOKEN, description: 'The `until` of a previous answer (or the `id` of an event).' },
        fields: FIELDS,
        formats: FORMATS
      }
    },
    headers: {
      type: 'object',
      properties: {
        Accept: { type: 'string', description: `\`${EVENT_STREAM_TYPE}\` for the live stream; anything else, JSON.` },
        'Last-Event-ID': { ...TOKEN, description: 'The stream: resume after this event (sent by EventSource when it reconnects); takes precedence over `since`.' },
        'X-Request-Id': headerSchemas.requestId
      }
    },
    response: {
      200: {
        description: 'The changes, or the event stream.',
        headers: { 'X-Request-Id': headerSchemas.requestIdEcho, 'Cache-Control': { type: 'string', description: '`no-store` (the stream: `no-store, no-transform`).' } },
        content: {
          [JSON_MEDIA_TYPE]: { schema: CHANGES_BODY },
          [EVENT_STREAM_TYPE]: { schema: { type: 'string', description: 'Server-sent events (see above).' } }
        }
      },
      ...problemResponses(['invalid-query', 'sync-expired', ...failures], options)
    }
  }
}
