// The front's OpenAPI document describes rendered content and the feeds as they answer: `formats`
// and the computed fields on the list and detail routes, and each feed and sitemap route with its
// media type, its `tag` parameter (feeds only), its 304 and its 404 without SITE_URL.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestFront } from '../helpers/tiers.js'

interface Parameter { in: string, name: string, description?: string, schema?: { pattern?: string, description?: string } }
interface Operation {
  operationId: string
  description?: string
  parameters?: Parameter[]
  responses: Record<string, { content?: Record<string, unknown> }>
}
type Document = { paths: Record<string, { get: Operation }> }

let front: FastifyInstance
let document: Document

before(async () => {
  front = buildTestFront(new URL('http://127.0.0.1:1'))
  const answer = await front.inject('/openapi.json')
  assert.equal(answer.statusCode, 200)
  document = answer.json()
})
after(async () => { await front.close() })

const queryParameter = (path: string, name: string): Parameter | undefined =>
  document.paths[path]?.get.parameters?.find((parameter) => parameter.in === 'query' && parameter.name === name)
const describedAs = (parameter: Parameter | undefined): string => `${parameter?.description ?? ''} ${parameter?.schema?.description ?? ''}`

test('formats (html, text) and the computed fields are described on the list and the detail', () => {
  for (const path of ['/api/blog', '/api/blog/{slug}']) {
    const formats = queryParameter(path, 'formats')
    assert.equal(formats?.schema?.pattern, '^(?:html|text)(?:,(?:html|text))*$', path)
    assert.match(describedAs(formats), /`C_html`[\s\S]*`C_text`/, path)
    assert.match(describedAs(queryParameter(path, 'fields')), /`reading_time`[\s\S]*`word_count`[\s\S]*`excerpt`/, path)
  }
})

test('each feed and sitemap route: its media type, tag on the feeds only, 304, and the 404 without SITE_URL', () => {
  const routes: Array<[string, string, boolean]> = [
    ['/feed.xml', 'application/rss+xml', true], ['/feed.atom', 'application/atom+xml', true], ['/feed.json', 'application/feed+json', true],
    ['/sitemap.xml', 'application/xml', false], ['/sitemap-{page}', 'application/xml', false]
  ]
  for (const [path, mediaType, tagged] of routes) {
    const operation = document.paths[path]?.get
    assert.ok(operation !== undefined, path)
    assert.deepEqual(Object.keys(operation.responses['200']?.content ?? {}), [mediaType], path)
    assert.ok('304' in operation.responses && '404' in operation.responses, path)
    assert.equal(queryParameter(path, 'tag') !== undefined, tagged, path)
    assert.match(operation.description ?? '', /SITE_URL/, path)
  }
  assert.match(document.paths['/feed.xml']?.get.description ?? '', /summary[\s\S]*excerpt/)
})
