// The stream of a streamed list: the chunks already read, then the rest of the source, each chunk
// as it came (text stays text, for the socket to encode), read at most one ahead of its consumer,
// and the source released when the stream is destroyed early.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { test } from 'node:test'
import fc from 'fast-check'
import { resumedStream } from '../../src/lib/resumed-stream.js'

/** An iterator over `chunks` that counts what was asked of it. */
function counted<T> (chunks: readonly T[]): AsyncIterator<T> & { taken: number, returned: boolean } {
  const source = {
    taken: 0,
    returned: false,
    async next (): Promise<IteratorResult<T>> {
      if (source.taken >= chunks.length) return { done: true, value: undefined }
      return { done: false, value: chunks[source.taken++] as T }
    },
    async return (): Promise<IteratorResult<T>> {
      source.returned = true
      return { done: true, value: undefined }
    }
  }
  return source
}

/** Lets the stream do whatever it does unasked: several turns of the event loop. */
async function settle (): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise(setImmediate)
}

test('yields the chunks read, then the rest, each as it came: text as text, bytes as bytes', async () => {
  await fc.assert(fc.asyncProperty(
    fc.array(fc.oneof(fc.string(), fc.uint8Array({ minLength: 1 }).map((bytes) => Buffer.from(bytes))), { maxLength: 12 }),
    fc.nat(12),
    async (chunks, split) => {
      const readFirst = chunks.slice(0, split)
      const out: Array<string | Buffer> = []
      for await (const chunk of resumedStream(readFirst, counted(chunks.slice(split)))) out.push(chunk as string | Buffer)
      assert.deepEqual(out, chunks)
    }
  ))
})

test('reads at most one chunk ahead of a consumer that does not read', async () => {
  const source = counted(Array.from({ length: 50 }, (_, i) => `chunk ${i}`))
  const stream = resumedStream([], source)
  // Asked once (nothing is buffered yet), the stream starts reading, then stops ahead of its consumer.
  assert.equal(stream.read(), null)
  await settle()
  assert.ok(source.taken <= 2, `${source.taken} chunks taken before any was read`)
  assert.equal(stream.read(), 'chunk 0')
  await settle()
  assert.ok(source.taken <= 3, `${source.taken} chunks taken after one was read`)
  stream.destroy()
})

test('destroyed before it reached its source, it still returns the source at once', async () => {
  const source = counted(Array.from({ length: 1000 }, (_, i) => String(i)))
  const stream = resumedStream(['[', '1', ',2'], source)
  const [first] = await once(stream, 'data') as [unknown]
  assert.equal(first, '[')
  stream.destroy()
  await once(stream, 'close')
  await settle()
  assert.equal(source.taken, 0)
  assert.equal(source.returned, true)
})
