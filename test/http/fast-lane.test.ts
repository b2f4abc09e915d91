// The lane writes a body's bytes as they are, however it hands them to Node: a small body as text
// of its bytes joined to the head, a larger one as a buffer beside it. Bytes that are not ASCII,
// and bytes that are not UTF-8 at all, must reach the client unchanged, with their length.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { createLaneKit, LaneExchange } from '../../src/http/fast-lane.js'
import { rawRequest } from '../helpers/raw-http.js'

const GET = 'GET /bytes HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'

describe('a body written by the lane', () => {
  let server: Server
  let port: number
  let body = Buffer.alloc(0)
  const answered: number[] = []

  before(async () => {
    const kit = createLaneKit(undefined, {
      answered: (_exchange, _route, status) => { answered.push(status) },
      left: () => { throw new Error('no client leaves here') },
      handOver: () => { throw new Error('nothing is handed over here') }
    })
    server = createServer((req, res) => {
      new LaneExchange(req, res, 'an-id', kit).answer('/bytes', 200, ['content-type', 'application/octet-stream'], body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => new Promise<void>((resolve) => server.close(() => { resolve() })))

  test('reaches the client byte for byte, with its length, whatever its size and bytes', async () => {
    const sizes = fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 600, max: 20_000 }))
    await fc.assert(fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 20_000, size: 'max' }), sizes, async (bytes, size) => {
      body = Buffer.from(bytes.subarray(0, size))
      const { status, headers, body: received } = await rawRequest(port, GET)
      assert.equal(status, 200)
      assert.equal(headers['content-length'], String(body.length))
      assert.deepEqual(received, body)
    }), { numRuns: 60 })
    assert.ok(answered.length >= 60 && answered.every((status) => status === 200), 'each answer was counted')
  })

  test('UTF-8 beyond ASCII, and bytes that are not UTF-8, at the sizes either way takes', async () => {
    const text = Buffer.from('é€😀 naïve ', 'utf8')
    for (const bytes of [text, Buffer.from([0x80, 0xff, 0xc3, 0x28, 0x00]), Buffer.concat(Array.from({ length: 400 }, () => text))]) {
      body = bytes
      const { headers, body: received } = await rawRequest(port, GET)
      assert.equal(headers['content-length'], String(bytes.length))
      assert.deepEqual(received, bytes)
    }
  })
})
