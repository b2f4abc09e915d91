// Checks a real answer against a tier's OpenAPI document: the operation the request reaches (or
// the document's NotFound / MethodNotAllowed responses when it reaches none), the status, every
// documented header (present when required, valid when present), no undocumented API header, the
// media type and the body, with ajv against the documented JSON Schema (2020-12, as OpenAPI 3.1).
import assert from 'node:assert/strict'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { TestResponse } from './http.js'

interface HeaderObject { required?: boolean, schema: object }
interface ResponseObject { headers?: Record<string, HeaderObject>, content?: Record<string, { schema: object }> }
interface Operation { responses: Record<string, ResponseObject> }
export interface OpenApiDocument {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { responses: Record<string, ResponseObject>, schemas: Record<string, object> }
}

/** The headers our answers may carry that a client acts on: each must be documented where sent. */
const API_HEADERS = ['etag', 'x-request-id', 'retry-after', 'cache-status', 'link', 'cache-control', 'vary', 'content-encoding', 'allow', 'x-total-count']

/** JSON Pointer escaping (RFC 6901). */
const escape = (token: string): string => token.replaceAll('~', '~0').replaceAll('/', '~1')

export interface Conformance {
  /** Asserts that `response`, the answer to `method path`, is one the document describes; returns what it matched. */
  check: (method: string, path: string, response: TestResponse) => string
}

export function createConformance (document: OpenApiDocument): Conformance {
  // The document is added whole, so that its `#/components/...` references resolve; only the
  // fragments below are compiled, as schemas. OpenAPI keywords such as `example` are not ajv's.
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addSchema(document, 'openapi.json')
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`)
  }))

  function validateAt (pointer: string, value: unknown, what: string): void {
    const validate = ajv.getSchema(`openapi.json#${pointer}`)
    assert.ok(validate !== undefined, `no schema at ${pointer}`)
    assert.ok(validate(value), `${what} does not match ${pointer}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`)
  }

  function checkResponse (pointer: string, object: ResponseObject, method: string, response: TestResponse, label: string): void {
    const documented = Object.fromEntries(Object.entries(object.headers ?? {}).map(([name, header]) => [name.toLowerCase(), { name, header }]))
    for (const [lower, { name, header }] of Object.entries(documented)) {
      const value = response.headers[lower]
      if (value === undefined) {
        assert.ok(header.required !== true, `${label}: required header ${name} missing`)
        continue
      }
      validateAt(`${pointer}/headers/${escape(name)}/schema`, Array.isArray(value) ? value.join(', ') : value, `${label}: header ${name}`)
    }
    for (const name of API_HEADERS) {
      if (response.headers[name] !== undefined) assert.ok(name in documented, `${label}: header ${name} is sent but not documented`)
    }
    if (object.content === undefined) {
      assert.equal(response.text, '', `${label}: a body where none is documented`)
      return
    }
    const mediaType = String(response.headers['content-type']).split(';')[0]?.trim() ?? ''
    assert.ok(mediaType in object.content, `${label}: media type ${mediaType} is not documented (${Object.keys(object.content).join(', ')})`)
    if (method === 'HEAD') return
    validateAt(`${pointer}/content/${escape(mediaType)}/schema`, JSON.parse(response.text), `${label}: body`)
  }

  return {
    check (method, path, response) {
      const pathname = path.split('?')[0] ?? path
      const label = `${method} ${path} → ${response.status}`
      const route = templates.find(({ regex }) => regex.test(pathname))
      // HEAD is GET's answer without its body; the document describes GET.
      const methodKey = method === 'HEAD' ? 'get' : method.toLowerCase()
      const operation = route === undefined ? undefined : document.paths[route.template]?.[methodKey]
      if (route === undefined || operation === undefined) {
        const name = route === undefined ? 'NotFound' : 'MethodNotAllowed'
        const object = document.components.responses[name]
        assert.ok(object !== undefined, `${label}: no components.responses.${name}`)
        assert.equal(response.status, route === undefined ? 404 : 405, `${label}: reaches no operation, so it must be ${name}`)
        checkResponse(`/components/responses/${name}`, object, method, response, label)
        return `components.responses.${name}`
      }
      const object = operation.responses[String(response.status)]
      assert.ok(object !== undefined, `${label}: status not documented for ${route.template} (${Object.keys(operation.responses).join(', ')})`)
      const pointer = `/paths/${escape(route.template)}/${methodKey}/responses/${response.status}`
      checkResponse(pointer, object, method, response, label)
      return `${route.template} ${response.status}`
    }
  }
}
