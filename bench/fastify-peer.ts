// A naive Fastify peer for the fixed cost of an answer: Fastify with its defaults (no logger, no
// hooks), answering the `invalid` scenario's request with the service's problem bytes and its
// content type, and nothing else. What the front pays beyond it on that request is its own
// headers, request id, access line, metrics and hooks (bench/answer-cost.ts).
//   node --import tsx bench/fastify-peer.ts --port 4001
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import { createSlugValidator, SLUG_MAX_LENGTH } from '../src/contract/slug.js'
import { problemBody, PROBLEM_CONTENT_TYPE } from '../src/contract/problems.js'

const { values } = parseArgs({ options: { port: { type: 'string' }, host: { type: 'string', default: '127.0.0.1' } } })
if (values.port === undefined) throw new Error('usage: fastify-peer.ts --port <port> [--host <host>]')
const isValidSlug = createSlugValidator()
const invalid = problemBody('invalid-slug', `A slug is 1 to ${SLUG_MAX_LENGTH} lower-case letters and digits in groups joined by single hyphens.`)

const app = Fastify()
app.get<{ Params: { slug: string } }>('/api/blog/:slug', async (request, reply) => {
  if (!isValidSlug(request.params.slug)) return await reply.code(400).header('content-type', PROBLEM_CONTENT_TYPE).send(invalid)
  return await reply.code(404).header('content-type', PROBLEM_CONTENT_TYPE).send(problemBody('post-not-found', 'No post has this slug.'))
})
await app.listen({ port: Number(values.port), host: values.host })
process.stdout.write(`fastify peer listening on http://${values.host}:${values.port}\n`)
process.once('SIGTERM', () => process.exit(0))
